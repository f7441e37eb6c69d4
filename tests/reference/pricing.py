"""The reference ledger's pricing (issue 12 §3): from the landing files and kubeledger.yml to
node-days, volume-days, load-balancer-days, platform fees, unallocated resources and the
in-scope cost per cluster, day and family — SPEC §3.2 and §4, written from the spec alone
(it imports nothing of kubeledger and never reads the warehouse).

    price_fleet(landing, config, *, as_of=None) -> Pricing

Where the SPEC is silent the choice is commented "SPEC silent: ...".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tests.reference import pricing_inputs as inputs
from tests.reference import pricing_nodes as nodes
from tests.reference import pricing_ratecard as ratecard
from tests.reference import pricing_scope as scope
from tests.reference.pricing_bills import billing_lines


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


# --------------------------------------------------------------------------- the run


def price_fleet(
    landing: Path,
    config: dict,
    *,
    as_of: dt.date | None = None,
    deliveries: list[Path] | None = None,
    usage=None,
) -> Pricing:
    """`deliveries`: folders loaded after `landing`, in load order; when given, a later
    delivery's billing period (and usage hours) replace the earlier ones by that order, not by
    file times (docs/landing-and-raw.md: replacement follows load order). `usage`:
    tests/reference/usage.py's Usage read from the same folders, so the operator's reports are
    parsed once (the pricing then reads only the bills and supplementary files)."""
    landing = Path(landing)
    settings = _settings(config, as_of)
    explicit = deliveries is not None
    files = inputs.scan(landing, deliveries)
    cache: dict = {}
    clusters = config.get("clusters") or []
    providers = {str(c["id"]): str(c.get("provider", "")) for c in clusters}

    shared = {} if usage is None else {"pods": usage.pods}
    usage_hours = inputs.node_hours(files.get("koku_pod", []), cache, explicit=explicit, **shared)
    shared = {} if usage is None else {"labels": usage.node_labels}
    labels = inputs.node_labels(
        files.get("koku_node_labels", []), cache, explicit=explicit, **shared
    )
    shared = {} if usage is None else {"storage": usage.storage}
    pv_days = inputs.volume_days(files.get("koku_storage", []), cache, explicit=explicit, **shared)
    usage = usage_hours
    nodes_csv = inputs.latest_supplementary(
        files.get("nodes", []), ["cluster_id", "node", "provider_id"]
    )
    lb_services = _lb_services(files.get("lb_services", []))
    card = ratecard.rate_card(files.get("rate_card", []), config)
    lines = billing_lines(files, explicit=explicit)
    lines["ikey"] = scope.instance_key(lines)
    lines["line_no"] = np.arange(len(lines))

    keys = nodes.node_keys(usage, nodes_csv, providers)
    set_paths = lines.loc[lines["kind"] == "instance", "ikey"]
    set_paths = set_paths[set_paths.str.contains("/virtualmachinescalesets/")].unique()
    by_name = {scope.last_segment(path): path for path in sorted(set_paths)}
    keys["ikey"] = keys["ikey"].where(keys["ikey"].notna(), keys["set_name"].map(by_name))

    lines = scope.spread_commitments(lines)
    usage_days = usage.drop_duplicates(["cluster_id", "usage_date"])[["cluster_id", "usage_date"]]
    usage_day_set = set(map(tuple, usage_days.to_numpy()))

    matched = scope.match_lines(lines, keys, pv_days, lb_services, clusters, settings)
    billed_through = scope.billed_through_by_account(lines)

    node_days, azure_rest = nodes.price_node_days(
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
    in_scope = (
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
        scope=_sorted(in_scope),
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


# --------------------------------------------------------------------------- scope


# --------------------------------------------------------------------------- node pricing


# --------------------------------------------------------------------------- assignment


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
    # Lead's ruling (3b, revised): SPEC §4 "a day with a bill but no usage ... its lines count
    # as unallocated with the reason no_usage" names every line of the day, the managed
    # control-plane fee included (issue 12 bug 2: "has only its control-plane fee on a day").
    # Lead's rulings (3c, 3d; SPEC §4): after the repair window every other in-scope line of a
    # cluster-day with billing and no usage (instances, disks, load balancers), and the line
    # of a node billed on a day the agent reported nothing for it while the cluster had usage,
    # is `no_usage` unallocated — never unattributed storage (`lost` below).
    # Lead's ruling (3e): the placement of such a line does not wait for the window (a day's
    # ledger cannot depend on the date it is read); within the window it is unallocated
    # `no_usage` already and only the day's completeness waits (day_status, close).
    matched["allocated"] = active & (matched["role"] != "selected") & matched["in_scope"]
    lost = matched["in_scope"] & ~active
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
    first = billed  # scope.match_lines joined each volume line to its PV (CSI handle, else PV name)
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
    by_name = day_cost.assign(lb_key=day_cost["rkey"].map(scope.last_segment)).merge(
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
        all(scope.is_billed(billed_through, p, a, d) for a in accounts)
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
