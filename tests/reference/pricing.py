"""The reference ledger's pricing (issue 12 §3): from the landing files and kubeledger.yml to
node-days, volume-days, load-balancer-days, platform fees, unallocated resources and the
in-scope cost per cluster, day and family — SPEC §3.2 and §4, written from the spec alone
(it imports nothing of kubeledger and never reads the warehouse).

    price_fleet(landing, config, *, as_of=None) -> Pricing

Where the SPEC is silent the choice is commented "SPEC silent: ...".
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tests.reference import pricing_inputs as inputs
from tests.reference.pricing_bills import billing_lines

FAMILY = {
    "instance": "compute",
    "control_plane": "compute",
    "volume": "storage",
    "load_balancer": "network",
    "data_transfer": "network",
}


@dataclass
class Pricing:
    node_days: pd.DataFrame
    volume_days: pd.DataFrame
    lb_days: pd.DataFrame
    platform_fees: pd.DataFrame
    unallocated: pd.DataFrame
    network_pool: pd.DataFrame
    scope: pd.DataFrame
    day_status: pd.DataFrame
    billing_link: pd.DataFrame


@dataclass
class _Settings:
    include_data_transfer: bool
    repair_window_days: int
    lookback_days: int
    as_of: dt.date


def _settings(config: dict, as_of: dt.date | None) -> _Settings:
    network = config.get("network") or {}
    reruns = config.get("reruns") or {}
    pricing = config.get("pricing") or {}
    return _Settings(
        include_data_transfer=bool(network.get("include_data_transfer", False)),
        repair_window_days=int(reruns.get("repair_window_days", 7)),
        lookback_days=int(pricing.get("estimate_lookback_days", 7)),
        # SPEC silent on the date the repair window is measured from in a reference over a
        # folder; the ledger's close takes --as-of (default today), so does this.
        as_of=as_of or dt.datetime.now(dt.UTC).date(),
    )


# --------------------------------------------------------------------------- nodes


def _last_segment(text: str) -> str:
    return text.rstrip("/").rsplit("/", 1)[-1]


_AKS_NODE = re.compile(r"^(aks-.+-vmss)[0-9a-z]{6}$", re.IGNORECASE)


def _node_keys(usage: pd.DataFrame, nodes_csv: pd.DataFrame, providers: dict) -> pd.DataFrame:
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
            key = _last_segment(pid).lower()
        elif provider == "azure":
            match = _AKS_NODE.match(row.node)
            set_name = match.group(1).lower() if match else None
        elif isinstance(row.resource_id, str) and row.resource_id:
            key = row.resource_id.lower()
        if provider == "focus" and key:
            key = _last_segment(key)
        rows.append((row.cluster_id, row.node, key, set_name, zone))
    return pd.DataFrame(rows, columns=["cluster_id", "node", "ikey", "set_name", "zone"])


def _instance_key(lines: pd.DataFrame) -> pd.Series:
    key = lines["rkey"].fillna("")
    focus = lines["fmt"] == "focus"
    return key.where(~focus, key.map(_last_segment))


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


# --------------------------------------------------------------------------- the run


def price_fleet(landing: Path, config: dict, *, as_of: dt.date | None = None) -> Pricing:
    landing = Path(landing)
    settings = _settings(config, as_of)
    files = inputs.scan(landing)
    cache: dict = {}
    clusters = config.get("clusters") or []
    providers = {str(c["id"]): str(c.get("provider", "")) for c in clusters}

    usage = inputs.node_hours(files.get("koku_pod", []), cache)
    labels = inputs.node_labels(files.get("koku_node_labels", []), cache)
    pv_days = inputs.volume_days(files.get("koku_storage", []), cache)
    nodes_csv = inputs.latest_supplementary(
        files.get("nodes", []), ["cluster_id", "node", "provider_id"]
    )
    lb_services = _lb_services(files.get("lb_services", []))
    card = inputs.rate_card(files.get("rate_card", []), config)
    lines = billing_lines(files)
    lines["ikey"] = _instance_key(lines)
    lines["line_no"] = np.arange(len(lines))

    keys = _node_keys(usage, nodes_csv, providers)
    set_paths = lines.loc[lines["kind"] == "instance", "ikey"]
    set_paths = set_paths[set_paths.str.contains("/virtualmachinescalesets/")].unique()
    by_name = {_last_segment(path): path for path in sorted(set_paths)}
    keys["ikey"] = keys["ikey"].where(keys["ikey"].notna(), keys["set_name"].map(by_name))

    lines = _spread_commitments(lines)
    usage_days = usage.drop_duplicates(["cluster_id", "usage_date"])[["cluster_id", "usage_date"]]
    usage_day_set = set(map(tuple, usage_days.to_numpy()))

    matched = _match(lines, keys, pv_days, lb_services, clusters, settings)
    billed_through = _billed_through(lines)

    node_days, azure_rest = _node_days(
        usage, keys, labels, lines, matched, billed_through, card, providers, settings
    )
    pending_or_lost = _assign(matched, node_days, usage_day_set, settings)
    volumes = _volume_days(matched, pv_days, usage_day_set, card, providers)
    lbs = _lb_days(matched, lb_services, usage_days, card, providers)
    fees = matched[(matched["role"] == "fee") & matched["allocated"]]
    platform_fees = (
        fees.groupby(["cluster_id", "charge_date", "resource_id"], as_index=False)["cost"]
        .sum()
        .rename(columns={"charge_date": "usage_date"})
        .assign(cost_family="compute")
    )[["cluster_id", "usage_date", "cost_family", "resource_id", "cost"]]
    unallocated = pd.concat([pending_or_lost, azure_rest], ignore_index=True)
    unallocated = unallocated.groupby(
        ["cluster_id", "usage_date", "cost_family", "resource_id", "reason"], as_index=False
    )["cost"].sum()
    network = matched[(matched["role"] == "data_transfer") & matched["allocated"]]
    network_pool = (
        network.groupby(["cluster_id", "charge_date"], as_index=False)["cost"]
        .sum()
        .rename(columns={"charge_date": "usage_date"})
    )[["cluster_id", "usage_date", "cost"]]
    scope = (
        matched[matched["in_scope"]]
        .groupby(["cluster_id", "charge_date", "family"], as_index=False)["cost"]
        .sum()
        .rename(
            columns={"charge_date": "usage_date", "family": "cost_family", "cost": "in_scope_cost"}
        )
    )
    day_status = _day_status(usage_days, matched, node_days, billed_through, providers)
    billing_link = pd.DataFrame(
        {
            "cluster_id": [str(c["id"]) for c in clusters],
            "has_billing_link": [bool(c.get("billing_link")) for c in clusters],
        }
    )
    return Pricing(
        node_days=_sorted(
            node_days[
                ["cluster_id", "node", "usage_date", "pricing_basis", "hours_run", "node_cost"]
            ]
        ),
        volume_days=_sorted(volumes),
        lb_days=_sorted(lbs),
        platform_fees=_sorted(platform_fees),
        unallocated=_sorted(unallocated),
        network_pool=_sorted(network_pool),
        scope=_sorted(scope),
        day_status=_sorted(day_status),
        billing_link=billing_link,
    )


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in frame.columns if not c.endswith("cost") and frame[c].dtype != float]
    return (
        frame.sort_values(keys, ignore_index=True) if len(frame) else frame.reset_index(drop=True)
    )


def _lb_services(files) -> pd.DataFrame:
    """lb_services.csv; optional `first_seen` / `last_seen` give each Service's hours (SPEC
    silent on where the hours come from; without them the split is even, as SPEC §4 says
    for unknown hours)."""
    columns = ["cluster_id", "namespace", "service", "load_balancer_id", "first_seen", "last_seen"]
    frame = inputs.latest_supplementary(files, columns)
    frame["lb_key"] = frame["load_balancer_id"].fillna("").str.lower()
    for column in ("first_seen", "last_seen"):
        frame[column] = inputs.to_utc(frame[column]) if len(frame) else frame[column]
    return frame


# --------------------------------------------------------------------------- Google CUD


def _spread_commitments(lines: pd.DataFrame) -> pd.DataFrame:
    """SPEC §3.2: a Google Cloud committed-use fee is spread over the account's instances in
    proportion to each instance's COMMITTED_USAGE_DISCOUNT credits that day. Each share is
    added as a line of that instance (same account, tags and resource), so it is the node's
    cost when the node is the cluster's and unallocated when the link selects it. SPEC silent
    on "account": the billing account here (commitments are shared across its projects)."""
    fees = lines[lines["kind"] == "commitment_fee"]
    if fees.empty:
        return lines
    fee_day = fees.groupby(["account", "charge_date"])["cost"].sum().rename("fee")
    instances = lines[(lines["kind"] == "instance") & (lines["fmt"] == "gcp")]
    cud = instances.groupby(["account", "charge_date", "ikey"], as_index=False).agg(
        cud=("cud", "sum"), first_line=("line_no", "min")
    )
    total = cud.groupby(["account", "charge_date"])["cud"].transform("sum")
    cud = cud.join(fee_day, on=["account", "charge_date"])
    cud = cud[(total != 0) & cud["fee"].notna() & (cud["cud"] != 0)]
    share = cud["fee"] * cud["cud"] / total[cud.index]
    template = lines.set_index("line_no").loc[cud["first_line"]].reset_index()
    template["cost"] = share.to_numpy()
    template["cud"] = 0.0
    template["hours"] = np.nan
    template["is_usage"] = False
    template["line_no"] = np.arange(len(lines), len(lines) + len(template))
    spread_days = set(map(tuple, cud[["account", "charge_date"]].to_numpy()))
    is_spread = [
        (a, d) in spread_days for a, d in zip(fees["account"], fees["charge_date"], strict=True)
    ]
    lines = lines.copy()
    # A spread fee is now carried by its shares; an unspread one stays at account level.
    lines.loc[fees.index[is_spread], "kind"] = "spread_commitment_fee"
    return pd.concat([lines, template[lines.columns]], ignore_index=True)


# --------------------------------------------------------------------------- scope


def _link_selects(lines: pd.DataFrame, link: dict) -> pd.Series:
    """SPEC §3.3: accounts only restrict; tags and patterns select. A link with accounts and
    no filter selects nothing (beyond the cluster's own resources, matched elsewhere)."""
    tags = link.get("tags") or []
    patterns = link.get("resource_id_patterns") or []
    accounts = [str(a) for a in (link.get("accounts") or [])]
    selected = pd.Series(False, index=lines.index)
    for tag in tags:
        key, has_value, value = str(tag).partition("=")
        norm = re.sub(r"[^a-z0-9]", "_", _strip_user(key.lower()))
        if has_value:
            selected |= lines["tags"].map(lambda t, k=norm, v=value: t.get(k) == v)
        else:
            selected |= lines["tags"].map(lambda t, k=norm: k in t)
    for pattern in patterns:
        selected |= lines["resource_id"].fillna("").str.contains(pattern, case=False, regex=True)
    if accounts:
        selected &= lines["account"].isin(accounts) | lines["sub_account"].isin(accounts)
    return selected


def _strip_user(key: str) -> str:
    for prefix in ("user:", "user_"):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def _match(lines, keys, pv_days, lb_services, clusters, settings) -> pd.DataFrame:
    """Every in-scope (and every data-transfer) line with its cluster and role:
    node | volume | lb | fee | selected (link-selected, matches nothing) | data_transfer."""
    out = []
    node_keys = keys.dropna(subset=["ikey"])[["cluster_id", "ikey"]].drop_duplicates()
    inst = lines[lines["kind"].isin(["instance", "data_transfer"])]
    hit = inst.merge(node_keys, on="ikey")
    hit["role"] = np.where(hit["kind"] == "instance", "node", "data_transfer")
    out.append(hit)

    pvs = pv_days.drop_duplicates(["cluster_id", "pv_name"])[
        ["cluster_id", "pv_name", "csi_volume_handle"]
    ]
    vol = lines[lines["kind"] == "volume"]
    by_handle = vol.merge(
        pvs.assign(rkey=pvs["csi_volume_handle"].fillna("").str.lower()), on="rkey"
    )
    vol_last = vol.assign(pv_key=vol["rkey"].map(_last_segment))
    by_name = vol_last.merge(pvs.assign(pv_key=pvs["pv_name"].str.lower()), on="pv_key").drop(
        columns="pv_key"
    )
    vols = pd.concat([by_handle, by_name]).drop_duplicates(["line_no", "cluster_id"])
    vols["role"] = "volume"
    out.append(vols[[*vols.columns]])

    lbs = lines[lines["kind"] == "load_balancer"]
    lb_ids = lb_services.drop_duplicates(["cluster_id", "lb_key"])[["cluster_id", "lb_key"]]
    lb_exact = lbs.merge(lb_ids.rename(columns={"lb_key": "rkey"}), on="rkey")
    bare = lb_ids[~lb_ids["lb_key"].str.contains("[/:]", regex=True)]
    lb_bare = lbs.assign(lb_key=lbs["rkey"].map(_last_segment)).merge(bare, on="lb_key")
    lb_hit = pd.concat([lb_exact, lb_bare.drop(columns="lb_key")]).drop_duplicates(
        ["line_no", "cluster_id"]
    )
    lb_hit["role"] = "lb"
    out.append(lb_hit)

    own = pd.concat(out, ignore_index=True)
    own_lines = set(own.loc[own["role"] != "data_transfer", "line_no"])

    fees = lines[lines["kind"] == "control_plane"]
    candidates = lines[
        lines["kind"].isin(["instance", "volume", "load_balancer"])
        & ~lines["line_no"].isin(own_lines)
    ]
    extra = []
    for cluster in clusters:
        cid = str(cluster["id"])
        link = cluster.get("billing_link") or {}
        # SPEC §4 / §5: a managed control-plane fee is matched by the cluster's ARN / name
        # (the EKS fee's resource ID ends in `cluster/<name>`), or by the link's filter.
        by_name = fees["cluster_name"].fillna("").str.lower() == cid.lower()
        by_link = _link_selects(fees, link) if link else False
        extra.append(fees[by_name | by_link].assign(cluster_id=cid, role="fee"))
        if link:
            chosen = candidates[_link_selects(candidates, link)]
            extra.append(chosen.assign(cluster_id=cid, role="selected"))
    matched = pd.concat([own, *extra], ignore_index=True)
    matched = matched.drop_duplicates(["line_no", "cluster_id"])
    matched["family"] = matched["kind"].map(FAMILY)
    matched["in_scope"] = (matched["role"] != "data_transfer") | settings.include_data_transfer
    return matched


def _billed_through(lines: pd.DataFrame) -> dict:
    """SPEC §4: per account, the latest end of its usage charge periods; rows spanning a whole
    month (tax, support fees) do not count."""
    usage = lines[lines["is_usage"].astype(bool) & lines["end"].notna()]
    month_start = usage["start"].dt.tz_localize(None).dt.to_period("M").dt.start_time
    next_month = month_start + pd.offsets.MonthBegin(1)
    whole_month = (usage["start"].dt.tz_localize(None) <= month_start) & (
        usage["end"].dt.tz_localize(None) >= next_month
    )
    usage = usage[~whole_month]
    ends = usage.groupby(["provider", "account"])["end"].max()
    return {key: value for key, value in ends.items()}


def _is_billed(billed_through: dict, provider: str, account: str, day: dt.date) -> bool:
    end = billed_through.get((provider, account))
    if end is None:
        return False
    return end >= pd.Timestamp(day + dt.timedelta(days=1), tz="UTC")


# --------------------------------------------------------------------------- node pricing


def _node_days(usage, keys, labels, lines, matched, billed_through, card, providers, settings):
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
        isinstance(accounts, tuple) and all(_is_billed(billed_through, p, a, day) for a in accounts)
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
    _estimate(nodes, card, settings)
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


def _estimate(nodes: pd.DataFrame, card, settings) -> None:
    """SPEC §4, days not billed yet: hours run × an hourly rate from, in order, the instance's
    last billed day, the median over every billed node of its instance type, purchase option
    and region in the lookback window, the rate card, else 0 `unpriced`.
    SPEC silent on the window's placement: the `estimate_lookback_days` days ending on the
    estimated day (README: "window of the instance-type median used for estimates")."""
    todo = nodes.index[(nodes["provider"] != "on_prem") & ~nodes["billed"]]
    if len(todo) == 0:
        return
    billed = nodes[nodes["rate"].notna()]
    last_rate = {}
    for (cluster, node), group in billed.sort_values("usage_date").groupby(["cluster_id", "node"]):
        last_rate[(cluster, node)] = list(zip(group["usage_date"], group["rate"], strict=True))
    peers = billed.assign(
        group=list(
            zip(billed["instance_type"], billed["purchase_option"], billed["region"], strict=True)
        )
    )
    peer_rates = {
        group: frame[["usage_date", "rate"]] for group, frame in peers.groupby("group", sort=False)
    }
    lookback = dt.timedelta(days=settings.lookback_days - 1)
    for index in todo:
        row = nodes.loc[index]
        rate = None
        history = [
            r for d, r in last_rate.get((row.cluster_id, row.node), []) if d < row.usage_date
        ]
        if history:
            rate = history[-1]
        if rate is None:
            frame = peer_rates.get((row.instance_type, row.purchase_option, row.region))
            if frame is not None:
                window = frame[
                    (frame["usage_date"] <= row.usage_date)
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


# --------------------------------------------------------------------------- assignment


def _past_window(day: dt.date, settings: _Settings) -> bool:
    return (settings.as_of - day).days > settings.repair_window_days


def _assign(matched, node_days, usage_day_set, settings) -> pd.DataFrame:
    """Marks each in-scope line allocated (it reaches a ledger row), and returns the
    unallocated ones: link-selected lines nothing matches (`no_kubernetes_object`), and —
    once the repair window has passed — the lines of a cluster-day without usage, or of a
    node that did not run that day (`no_usage`). Within the window those stay pending."""
    ran = set(map(tuple, node_days[["cluster_id", "ikey", "usage_date"]].dropna().to_numpy()))
    day_has_usage = [
        (c, d) in usage_day_set
        for c, d in zip(matched["cluster_id"], matched["charge_date"], strict=True)
    ]
    matched["day_has_usage"] = day_has_usage
    node_ran = [
        role != "node" or (c, k, d) in ran
        for role, c, k, d in zip(
            matched["role"],
            matched["cluster_id"],
            matched["ikey"],
            matched["charge_date"],
            strict=True,
        )
    ]
    active = matched["day_has_usage"] & pd.Series(node_ran, index=matched.index)
    past = matched["charge_date"].map(lambda d: _past_window(d, settings))
    matched["allocated"] = active & (matched["role"] != "selected") & matched["in_scope"]
    lost = matched["in_scope"] & ~active & past
    selected = matched["in_scope"] & active & (matched["role"] == "selected")
    rows = pd.concat(
        [
            matched[selected].assign(reason="no_kubernetes_object"),
            matched[lost].assign(reason="no_usage"),
        ]
    )
    return pd.DataFrame(
        {
            "cluster_id": rows["cluster_id"],
            "usage_date": rows["charge_date"],
            "cost_family": rows["family"],
            "resource_id": rows["resource_id"],
            "reason": rows["reason"],
            "cost": rows["cost"],
        }
    )


def _volume_days(matched, pv_days, usage_day_set, card, providers) -> pd.DataFrame:
    billed = matched[(matched["role"] == "volume") & matched["allocated"]]
    first = billed  # _match joined each volume line to its PV (CSI handle, else PV name)
    out = first.groupby(["cluster_id", "charge_date", "pv_name", "resource_id"], as_index=False)[
        "cost"
    ].sum()
    out = out.rename(columns={"charge_date": "usage_date", "cost": "volume_cost"})
    # Rate-card volumes (SPEC §4: on-prem volumes may be priced per GiB-month): capacity
    # GiB-hours / hours in the month × the price. SPEC silent on the GiB-month's length:
    # the calendar month's hours.
    priced = []
    on_prem = pv_days[pv_days["cluster_id"].map(providers) == "on_prem"]
    for row in on_prem.itertuples(index=False):
        labels = inputs.parse_labels(row.pv_labels)
        # SPEC §4: without a price they cost 0 (a row of 0, so the PV-day is still listed).
        price = card.price(row.cluster_id, "volume", row.pv_name, labels, row.usage_date) or 0.0
        first_day = row.usage_date.replace(day=1)
        next_month = (first_day + dt.timedelta(days=32)).replace(day=1)
        month_seconds = (next_month - first_day).days * 86400.0
        gib_months = row.capacity_byte_seconds / 2**30 / month_seconds
        priced.append(
            (
                row.cluster_id,
                row.usage_date,
                row.pv_name,
                row.csi_volume_handle or row.pv_name,
                gib_months * price,
            )
        )
    rate = pd.DataFrame(
        priced, columns=["cluster_id", "usage_date", "pv_name", "resource_id", "volume_cost"]
    )
    return pd.concat([out, rate], ignore_index=True)


def _lb_days(matched, lb_services, usage_days, card, providers) -> pd.DataFrame:
    """SPEC §4: several Services may report one load balancer; its day cost is split among
    them in proportion to the hours each existed that day (evenly when unknown), summing
    exactly to the LB's cost (the last Service in name order takes the remainder)."""
    columns = [
        "cluster_id",
        "usage_date",
        "namespace",
        "service",
        "resource_id",
        "load_balancer_cost",
    ]
    billed = matched[(matched["role"] == "lb") & matched["allocated"]]
    day_cost = (
        billed.groupby(["cluster_id", "charge_date", "rkey"], as_index=False)
        .agg(cost=("cost", "sum"), resource_id=("resource_id", "first"))
        .rename(columns={"charge_date": "usage_date"})
    )
    services = lb_services[
        ["cluster_id", "namespace", "service", "lb_key", "first_seen", "last_seen"]
    ]
    exact = day_cost.merge(
        services, left_on=["cluster_id", "rkey"], right_on=["cluster_id", "lb_key"]
    )
    bare = services[~services["lb_key"].str.contains("[/:]", regex=True)]
    by_name = day_cost.assign(lb_key=day_cost["rkey"].map(_last_segment)).merge(
        bare, on=["cluster_id", "lb_key"]
    )
    pairs = pd.concat([exact, by_name], ignore_index=True).drop_duplicates(
        ["cluster_id", "usage_date", "rkey", "namespace", "service"]
    )
    pairs = pairs.rename(columns={"cost": "total"})
    parts = [_split(pairs, ["cluster_id", "usage_date", "rkey"])]
    # Rate-card load balancers (on-prem): an hourly price by Service name or LB ID, for
    # every day the cluster has usage (SPEC silent on the hours: the hours the Service
    # existed when known, else 24).
    on_prem = usage_days[usage_days["cluster_id"].map(providers) == "on_prem"]
    rows = []
    for day in on_prem.itertuples(index=False):
        mine = lb_services[lb_services["cluster_id"] == day.cluster_id]
        for lb_id in mine["load_balancer_id"].unique():
            price = card.price(day.cluster_id, "load_balancer", lb_id, {}, day.usage_date)
            rows.append((day.cluster_id, day.usage_date, lb_id, price or 0.0))
    if rows:
        priced = pd.DataFrame(rows, columns=["cluster_id", "usage_date", "resource_id", "price"])
        priced["rkey"] = priced["resource_id"]
        pairs = priced.merge(
            lb_services[
                [
                    "cluster_id",
                    "load_balancer_id",
                    "namespace",
                    "service",
                    "first_seen",
                    "last_seen",
                ]
            ],
            left_on=["cluster_id", "rkey"],
            right_on=["cluster_id", "load_balancer_id"],
        )
        hours = _hours_existed(pairs)
        longest = hours.groupby(
            [pairs["cluster_id"], pairs["usage_date"], pairs["rkey"]]
        ).transform("max")
        pairs["total"] = pairs["price"] * longest.where(hours.notna() & (longest > 0), 24.0)
        parts.append(_split(pairs, ["cluster_id", "usage_date", "rkey"]))
    return pd.concat(parts, ignore_index=True)[columns]


def _hours_existed(pairs: pd.DataFrame) -> pd.Series:
    """Hours of its day each Service existed, from first_seen / last_seen; NaN when the
    Service has neither."""
    start = pd.to_datetime(pairs["usage_date"]).dt.tz_localize("UTC")
    end = start + pd.Timedelta(days=1)
    first = pd.to_datetime(pairs["first_seen"], utc=True)
    last = pd.to_datetime(pairs["last_seen"], utc=True)
    lo = first.where(first > start, start)
    hi = last.where(last < end, end)
    hours = ((hi - lo).dt.total_seconds() / 3600.0).clip(lower=0.0)
    return hours.where(first.notna() | last.notna())


def _split(pairs: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Each LB-day's `total` over its Services by hours existed (evenly when no Service's
    hours are known or they sum to 0); the last Service in (namespace, service) order takes
    the remainder, so the split sums to the total exactly."""
    if pairs.empty:
        return pd.DataFrame(
            columns=[
                "cluster_id",
                "usage_date",
                "namespace",
                "service",
                "resource_id",
                "load_balancer_cost",
            ]
        )
    pairs = pairs.sort_values([*group, "namespace", "service"]).reset_index(drop=True)
    hours = _hours_existed(pairs)
    grouped = hours.groupby([pairs[g] for g in group])
    known = grouped.transform("count") > 0
    total_hours = grouped.transform("sum")
    even = ~known | (total_hours <= 0)
    # A Service without first_seen / last_seen beside ones with them existed all day.
    weight = hours.fillna(24.0).where(~even, 1.0)
    weight_sum = weight.groupby([pairs[g] for g in group]).transform("sum")
    share = pairs["total"] * weight / weight_sum
    is_last = ~pairs.duplicated(group, keep="last")
    others = share.where(~is_last, 0.0).groupby([pairs[g] for g in group]).transform("sum")
    pairs["load_balancer_cost"] = share.where(~is_last, pairs["total"] - others)
    return pairs


def _day_status(usage_days, matched, node_days, billed_through, providers) -> pd.DataFrame:
    scoped = matched[matched["in_scope"]]
    billing = (
        scoped.groupby(["cluster_id", "charge_date"])
        .agg(
            accounts=("account", lambda a: tuple(sorted(set(a)))),
            provider=("provider", "first"),
        )
        .reset_index()
        .rename(columns={"charge_date": "usage_date"})
    )
    billing["has_billing"] = [
        all(_is_billed(billed_through, p, a, d) for a in accounts)
        for accounts, p, d in zip(
            billing["accounts"], billing["provider"], billing["usage_date"], strict=True
        )
    ]
    status = usage_days.assign(has_usage=True).merge(
        billing[["cluster_id", "usage_date", "has_billing"]], how="outer"
    )
    status["has_usage"] = status["has_usage"].eq(True)
    status["has_billing"] = status["has_billing"].eq(True)
    estimated = node_days[
        node_days["pricing_basis"].isin(["estimate", "unpriced"])
        & (node_days["provider"] != "on_prem")
    ]
    counts = estimated.groupby(["cluster_id", "usage_date"]).size().rename("estimated_nodes")
    status = status.join(counts, on=["cluster_id", "usage_date"])
    status["estimated_nodes"] = status["estimated_nodes"].fillna(0).astype(int)
    return status[["cluster_id", "usage_date", "has_usage", "has_billing", "estimated_nodes"]]
