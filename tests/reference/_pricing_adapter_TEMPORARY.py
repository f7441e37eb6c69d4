"""TEMPORARY stand-in for tests/reference/pricing.py (owned by refprice) — delete once the real
one is merged. Builds a Pricing-shaped object: cloud node-days from tests/oracle.py's cluster-day
compute cost split over the cluster's nodes by hours run, on-prem node-days from the rate card
(node name, else first matching label). No volumes, LBs, fees or unallocated."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tests.oracle import expected_node_compute_cost
from tests.reference.usage import read_usage


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


def price_fleet(landing: Path, config: dict) -> Pricing:
    usage = read_usage(Path(landing))
    pods = usage.pods
    hours = (
        pods.drop_duplicates(["cluster_id", "node", "hour"])
        .assign(f=lambda f: f["node_capacity_cpu_core_seconds"] / (f["node_capacity_cpu_cores"] * 3600))
        .groupby(["cluster_id", "node", "usage_date"], as_index=False)["f"]
        .sum()
        .rename(columns={"f": "hours_run"})
    )
    cloud = expected_node_compute_cost(landing).rename(columns={"cost": "cluster_cost"})
    cloud["usage_date"] = pd.to_datetime(cloud["usage_date"]).dt.date
    node_days = hours.merge(cloud, on=["cluster_id", "usage_date"], how="left")
    node_days["share"] = node_days["hours_run"] / node_days.groupby(["cluster_id", "usage_date"])[
        "hours_run"
    ].transform("sum")
    node_days["node_cost"] = node_days["cluster_cost"] * node_days["share"]
    node_days["pricing_basis"] = "bill"
    rates = []
    for price in config.get("node_prices") or []:
        rates.append(price)
    card = []
    for path in sorted((Path(landing) / "rate_card").glob("*.csv")):
        card.append(pd.read_csv(path, dtype=str))
    card = pd.concat(card) if card else pd.DataFrame()
    labels = usage.node_labels.drop_duplicates(["cluster_id", "node"], keep="last").set_index(
        ["cluster_id", "node"]
    )["node_labels"]
    onprem = node_days["cluster_cost"].isna()
    for index in node_days.index[onprem]:
        row = node_days.loc[index]
        node_labels = labels.get((row.cluster_id, row.node), "")
        price = 0.0
        candidates = card[card["cluster_id"] == row.cluster_id] if len(card) else card
        own = candidates[(candidates.selector_type == "node") & (candidates.selector == row.node)]
        own = own[pd.to_datetime(own.effective_from).dt.date <= row.usage_date]
        if len(own):
            price = float(own.iloc[-1].price)
        else:
            for selector in candidates[candidates.selector_type == "label"].itertuples():
                key, _, value = selector.selector.partition("=")
                sanitized = "label_" + key.replace(".", "_").replace("/", "_").replace("-", "_")
                if dt.date.fromisoformat(selector.effective_from) > row.usage_date:
                    continue
                if f"{sanitized}:{value}" in node_labels:
                    price = float(selector.price)
        node_days.loc[index, "node_cost"] = price * row.hours_run
        node_days.loc[index, "pricing_basis"] = "rate_card"
    node_days = node_days[["cluster_id", "node", "usage_date", "pricing_basis", "hours_run", "node_cost"]]
    linked = {c["id"] for c in config.get("clusters") or [] if c.get("billing_link")}
    scope = (
        node_days[node_days.cluster_id.isin(linked)]
        .groupby(["cluster_id", "usage_date"], as_index=False)["node_cost"]
        .sum()
        .rename(columns={"node_cost": "in_scope_cost"})
        .assign(cost_family="compute")
    )
    day_status = (
        node_days.groupby(["cluster_id", "usage_date"], as_index=False)
        .size()
        .assign(has_usage=True, has_billing=True, estimated_nodes=0)
        .drop(columns="size")
    )
    empty = pd.DataFrame
    return Pricing(
        node_days=node_days,
        volume_days=empty(columns=["cluster_id", "usage_date", "pv_name", "resource_id", "volume_cost"]),
        lb_days=empty(columns=["cluster_id", "usage_date", "namespace", "service", "resource_id", "load_balancer_cost"]),
        platform_fees=empty(columns=["cluster_id", "usage_date", "cost_family", "resource_id", "cost"]),
        unallocated=empty(columns=["cluster_id", "usage_date", "cost_family", "resource_id", "reason", "cost"]),
        network_pool=empty(columns=["cluster_id", "usage_date", "cost"]),
        scope=scope,
        day_status=day_status,
        billing_link=pd.DataFrame(
            {"cluster_id": [c["id"] for c in config.get("clusters") or []],
             "has_billing_link": [bool(c.get("billing_link")) for c in config.get("clusters") or []]}
        ),
    )
