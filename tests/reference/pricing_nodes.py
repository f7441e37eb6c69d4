"""The reference pricing's node-days (SPEC §4 "Nodes", "No-bill clusters", "Days not billed
yet"): bill, Azure scale-set split, estimate tiers and rate card. Imports nothing of
kubeledger."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

from tests.reference import pricing_scope as scope

_AKS_NODE = re.compile(r"^(aks-.+-vmss)[0-9a-z]{6}$", re.IGNORECASE)


def node_keys(usage: pd.DataFrame, nodes_csv: pd.DataFrame, providers: dict) -> pd.DataFrame:
    """One row per cluster and node: the key its bill lines carry (SPEC §4: AWS `i-…`, Google
    Cloud the instance name, Azure the scale set), and the zone / region its provider ID
    names. Without a provider ID the operator's resource_id is used (Azure: the scale set
    from the AKS node name)."""
    pairs = usage.groupby(["cluster_id", "node"], as_index=False)["resource_id"].max()
    known = nodes_csv.dropna(subset=["provider_id"])
    known = known[known["provider_id"].str.strip() != ""]
    known = known.drop_duplicates(["cluster_id", "node"], keep="last")
    pairs = pairs.merge(known[["cluster_id", "node", "provider_id"]], how="left")
    rows = []
    for row in pairs.itertuples(index=False):
        provider = providers.get(row.cluster_id, "")
        pid = row.provider_id if isinstance(row.provider_id, str) else ""
        key, set_name, zone = None, None, None
        if pid.startswith("aws://"):
            parts = pid.removeprefix("aws://").strip("/").split("/")
            key, zone = parts[-1].lower(), (parts[0] if len(parts) > 1 else None)
        elif pid.startswith("gce://"):
            parts = pid.removeprefix("gce://").split("/")
            key, zone = parts[-1].lower(), (parts[1] if len(parts) > 2 else None)
        elif pid.startswith("azure://"):
            path = pid.removeprefix("azure://").lower()
            key = re.sub(r"/virtualmachines/[^/]+$", "", path)
        elif pid:
            key = scope.last_segment(pid).lower()
        elif provider == "azure":
            match = _AKS_NODE.match(row.node)
            set_name = match.group(1).lower() if match else None
        elif isinstance(row.resource_id, str) and row.resource_id:
            key = row.resource_id.lower()
        if provider == "focus" and key:
            key = scope.last_segment(key)
        rows.append((row.cluster_id, row.node, key, set_name, zone))
    return pd.DataFrame(rows, columns=["cluster_id", "node", "ikey", "set_name", "zone"])


def _label(labels: dict, *keys: str):
    for key in keys:
        value = labels.get(key)
        if value:
            return value
    return None


def _label_purchase_option(labels: dict) -> str:
    """SPEC §3.2 names the Azure priority labels; the EKS / Karpenter / GKE capacity labels are
    the same fact on the other clouds (SPEC silent; used only for nodes without a bill)."""
    spot_values = {
        "eks_amazonaws_com_capacityType": "SPOT",
        "karpenter_sh_capacity_type": "spot",
        "cloud_google_com_gke_spot": "true",
        "cloud_google_com_gke_preemptible": "true",
        "kubernetes_azure_com_priority": "spot",
        "kubernetes_azure_com_scalesetpriority": "spot",
    }
    for key, value in spot_values.items():
        if str(labels.get(key, "")).lower() == value.lower():
            return "spot"
    return "on_demand"


def _region_from_zone(zone: str | None) -> str | None:
    if not zone:
        return None
    if re.match(r"^[a-z]+-[a-z]+\d+-[a-z]$", zone):  # us-central1-a
        return zone.rsplit("-", 1)[0]
    if re.match(r"^[a-z]+-[a-z]+-\d+[a-z]$", zone):  # us-east-1a
        return zone[:-1]
    return zone


def price_node_days(usage, keys, labels, lines, matched, billed_through, card, providers, settings):
    nodes = usage.merge(keys[["cluster_id", "node", "ikey", "zone"]], how="left")
    nodes = nodes.merge(labels, how="left", on=["cluster_id", "node", "usage_date"])
    nodes["labels"] = nodes["labels"].map(lambda v: v if isinstance(v, dict) else {})
    nodes["provider"] = nodes["cluster_id"].map(providers).fillna("")

    node_lines = matched[matched["role"] == "node"]
    per_day = (
        node_lines.groupby(["cluster_id", "ikey", "charge_date"], as_index=False)
        .agg(
            line_cost=("cost", "sum"),
            line_hours=("hours", lambda h: h.sum(min_count=1)),
            accounts=("account", lambda a: tuple(sorted(set(a)))),
            bill_provider=("provider", "first"),
            bill_option=("purchase_option", lambda p: sorted(p)[0]),
            bill_type=("instance_type", lambda t: next((x for x in t if isinstance(x, str)), None)),
            bill_region=("region", lambda r: next((x for x in r if isinstance(x, str)), None)),
        )
        .rename(columns={"charge_date": "usage_date"})
    )
    nodes = nodes.merge(per_day, how="left", on=["cluster_id", "ikey", "usage_date"])
    nodes["is_set"] = nodes["ikey"].fillna("").str.contains("/virtualmachinescalesets/")

    # Azure (SPEC §4): a node gets the scale set's day cost × its hours / max(Σ hours of the
    # set's nodes seen, billed hours of the set); the remainder is unallocated.
    sets = nodes[nodes["is_set"] & nodes["line_cost"].notna()]
    seen = sets.groupby(["ikey", "usage_date"])["hours_run"].transform("sum")
    denominator = np.maximum(seen, sets["line_hours"].fillna(0.0))
    share = (sets["line_cost"] * sets["hours_run"] / denominator).where(denominator > 0, 0.0)
    nodes.loc[sets.index, "line_cost"] = share
    nodes.loc[sets.index, "line_hours"] = sets["hours_run"]
    set_days = per_day[per_day["ikey"].str.contains("/virtualmachinescalesets/")]
    given = (
        nodes.loc[sets.index]
        .groupby(["cluster_id", "ikey", "usage_date"], as_index=False)["line_cost"]
        .sum()
        .rename(columns={"line_cost": "given"})
    )
    rest = set_days.merge(given, how="left", on=["cluster_id", "ikey", "usage_date"])
    rest["cost"] = rest["line_cost"] - rest["given"].fillna(0.0)
    has_usage = set(map(tuple, usage[["cluster_id", "usage_date"]].drop_duplicates().to_numpy()))
    on_usage_day = np.array(
        [(c, d) in has_usage for c, d in zip(rest["cluster_id"], rest["usage_date"], strict=True)],
        dtype=bool,
    )
    rest = rest[on_usage_day]
    rest = rest[rest["given"].notna() & (rest["cost"].abs() > 1e-12)]
    set_ids = node_lines.groupby("ikey")["resource_id"].first()
    azure_rest = pd.DataFrame(
        {
            "cluster_id": rest["cluster_id"],
            "usage_date": rest["usage_date"],
            "cost_family": "compute",
            "resource_id": rest["ikey"].map(set_ids),
            "reason": "unseen_instances",
            "cost": rest["cost"],
        }
    )

    billed = [
        isinstance(accounts, tuple)
        and all(scope.is_billed(billed_through, p, a, day) for a in accounts)
        for accounts, p, day in zip(
            nodes["accounts"], nodes["bill_provider"], nodes["usage_date"], strict=True
        )
    ]
    nodes["billed"] = billed
    nodes["pricing_basis"] = None
    nodes["node_cost"] = 0.0
    on_prem = nodes["provider"] == "on_prem"
    is_bill = ~on_prem & nodes["billed"]
    nodes.loc[is_bill, "pricing_basis"] = "bill"
    nodes.loc[is_bill, "node_cost"] = nodes.loc[is_bill, "line_cost"]

    nodes["instance_type"] = [
        inputs_label or bill
        for inputs_label, bill in zip(
            nodes["labels"].map(
                lambda lab: _label(
                    lab, "node_kubernetes_io_instance_type", "beta_kubernetes_io_instance_type"
                )
            ),
            nodes["bill_type"],
            strict=True,
        )
    ]
    nodes["region"] = [
        lab or bill or _region_from_zone(zone)
        for lab, bill, zone in zip(
            nodes["labels"].map(
                lambda lab: _label(
                    lab, "topology_kubernetes_io_region", "failure_domain_beta_kubernetes_io_region"
                )
            ),
            nodes["bill_region"],
            nodes["zone"],
            strict=True,
        )
    ]
    # Billed hours (SPEC §4 "cost / billed hours"): the bill's instance hours where it carries
    # them (AWS usage amount of the instance-hour lines, the Azure node's hours), else the hours
    # the node ran that day (Google bills core- and RAM-hours, not instance hours).
    hours = nodes["line_hours"].where(nodes["line_hours"] > 0, nodes["hours_run"])
    nodes["rate"] = (nodes["node_cost"] / hours).where(is_bill & (hours > 0))
    nodes["purchase_option"] = nodes["bill_option"].where(
        is_bill, nodes["labels"].map(_label_purchase_option)
    )
    estimate(nodes, card, settings)
    on_prem_rows = nodes[on_prem]
    for index, row in on_prem_rows.iterrows():
        price = card.price(row.cluster_id, "node", row.node, row.labels, row.usage_date)
        if price is None:
            nodes.at[index, "pricing_basis"] = "unpriced"
            nodes.at[index, "node_cost"] = 0.0
        else:
            nodes.at[index, "pricing_basis"] = "rate_card"
            nodes.at[index, "node_cost"] = row.hours_run * price
    return nodes, azure_rest


def _spot_class(purchase_option: str) -> str:
    return "spot" if purchase_option == "spot" else "not_spot"


def estimate(nodes: pd.DataFrame, card, settings) -> None:
    """SPEC §4, days not billed yet: hours run × an hourly rate from, in order, the instance's
    last billed day, the median over every billed node of its instance type, purchase option
    and region in the lookback window, the rate card, else 0 `unpriced`.
    The window is the `estimate_lookback_days` days before the estimated day (ruling below)."""
    todo = nodes.index[(nodes["provider"] != "on_prem") & ~nodes["billed"]]
    if len(todo) == 0:
        return
    # The instance a node is billed as (SPEC §4: "the instance ID parsed from its provider ID
    # (AWS i-…; Google Cloud the instance name; Azure the scale set, then split by hours)"):
    # on Azure the scale set, so a node new to a billed scale set takes the set's last billed
    # rate per node-hour (lead's ruling; SPEC's tier 1, "the instance's last billed day").
    nodes["instance"] = nodes["node"].where(~nodes["is_set"], nodes["ikey"])
    billed = nodes[nodes["rate"].notna()]
    last_rate = {}
    for (cluster, instance), group in billed.sort_values(["usage_date", "node"]).groupby(
        ["cluster_id", "instance"]
    ):
        last_rate[(cluster, instance)] = list(zip(group["usage_date"], group["rate"], strict=True))
    # Lead's ruling (SPEC silent on how a node with no bill of its own, whose labels tell only
    # spot or not, matches billed purchase options): peers are grouped by instance type, spot
    # or not spot, and region — on-demand, savings-plan, reserved and committed peers are one
    # group (README, pricing: "an on-demand node matches every non-spot peer").
    peers = billed.assign(
        group=list(
            zip(
                billed["instance_type"],
                billed["purchase_option"].map(_spot_class),
                billed["region"],
                strict=True,
            )
        )
    )
    peer_rates = {
        group: frame[["usage_date", "rate"]] for group, frame in peers.groupby("group", sort=False)
    }
    # Lead's ruling (SPEC: "the 7-day median"; silent on the window's placement): the
    # `estimate_lookback_days` days before the estimated day.
    lookback = dt.timedelta(days=settings.lookback_days)
    for index in todo:
        row = nodes.loc[index]
        rate = None
        history = [
            r for d, r in last_rate.get((row.cluster_id, row.instance), []) if d < row.usage_date
        ]
        if history:
            rate = history[-1]
        if rate is None:
            frame = peer_rates.get(
                (row.instance_type, _spot_class(row.purchase_option), row.region)
            )
            if frame is not None:
                window = frame[
                    (frame["usage_date"] < row.usage_date)
                    & (frame["usage_date"] >= row.usage_date - lookback)
                ]
                if len(window):
                    rate = float(np.median(window["rate"]))
        if rate is None:
            rate = card.price(row.cluster_id, "node", row.node, row.labels, row.usage_date)
        if rate is None:
            nodes.at[index, "pricing_basis"] = "unpriced"
            nodes.at[index, "node_cost"] = 0.0
        else:
            nodes.at[index, "pricing_basis"] = "estimate"
            nodes.at[index, "node_cost"] = row.hours_run * rate
