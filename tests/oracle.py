"""An independent oracle: the net amortized compute cost of each cloud cluster's nodes per
UTC day, computed straight from the landing files with pandas / pyarrow and no kubeledger code.

    expected_node_compute_cost(landing_dir, late=()) -> DataFrame[cluster_id, usage_date, cost]

`late` are folders delivered after the landing folder (the generator's `late/<day>/`), in
load order. A CUR file replaces the rows of its billing period of its account that earlier
deliveries brought (docs/landing-and-raw.md: a restated export; the files of one delivery
add up).

Rules (SPEC §3.2, §4):
- AWS (CUR 2.0): instance lines (`i-…` of the cluster's nodes from nodes.csv) of type
  Usage -> net unblended cost, DiscountedUsage -> net reservation effective cost,
  SavingsPlanCoveredUsage -> net savings-plan effective cost; never data transfer, never the
  EKS split rows (`EKSPod-EC2`); the non-net column when a net one is empty.
- Google Cloud: Compute Engine rows whose resource.name ends in the node's instance name,
  cost + sum(credits.amount), plus the node's share of the day's commitment-fee rows in
  proportion to its COMMITTED_USAGE_DISCOUNT credits that day (per billing account).
- Azure: the cost (CostInBillingCurrency, else Cost) of the rows of the cluster's scale sets,
  resource IDs compared case-insensitively.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

INSTANCE_TYPES = {
    "Usage": ("line_item_net_unblended_cost", "line_item_unblended_cost"),
    "DiscountedUsage": ("reservation_net_effective_cost", "reservation_effective_cost"),
    "SavingsPlanCoveredUsage": (
        "savings_plan_net_savings_plan_effective_cost",
        "savings_plan_savings_plan_effective_cost",
    ),
}


def expected_node_compute_cost(
    landing_dir: Path | str, late: Sequence[Path | str] = ()
) -> pd.DataFrame:
    landing = Path(landing_dir)
    nodes = _nodes(landing)
    costs: dict[tuple[str, dt.date], float] = defaultdict(float)
    deliveries = [landing, *(Path(folder) for folder in late)]
    for part in (_aws(deliveries, nodes), _gcp(landing, nodes), _azure(landing, nodes)):
        for key, value in part.items():
            costs[key] += value
    frame = pd.DataFrame(
        [(cluster, day, cost) for (cluster, day), cost in costs.items()],
        columns=["cluster_id", "usage_date", "cost"],
    )
    return frame.sort_values(["cluster_id", "usage_date"], ignore_index=True)


def _nodes(landing: Path) -> pd.DataFrame:
    frames = [
        pd.read_csv(path, dtype=str, keep_default_na=False)
        for path in sorted((landing / "cluster").glob("*/nodes.csv"))
    ]
    nodes = pd.concat(frames, ignore_index=True)
    return nodes[["cluster_id", "node", "provider_id"]]


def _number(value) -> float:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value == "":
        return float("nan")
    return float(value)


def _aws_bills(deliveries: list[Path]) -> list[pd.DataFrame]:
    """The CUR files that count: per (payer account, billing period), those of the last
    delivery that brought that period."""
    periods: dict[tuple[str, str], tuple[int, list[pd.DataFrame]]] = {}
    for number, folder in enumerate(deliveries):
        for path in sorted((folder / "billing" / "aws").rglob("*.parquet")):
            bill = pq.read_table(path).to_pandas()
            for key, rows in bill.groupby(
                [bill["bill_payer_account_id"], bill["bill_billing_period_start_date"].str[:10]]
            ):
                delivered, frames = periods.get(key, (number, []))
                if delivered < number:  # a later delivery restates the period
                    delivered, frames = number, []
                frames.append(rows)
                periods[key] = (delivered, frames)
    return [frame for _, frames in periods.values() for frame in frames]


def _aws(deliveries: list[Path], nodes: pd.DataFrame) -> dict:
    instance_cluster = {
        provider_id.rsplit("/", 1)[-1]: cluster
        for cluster, provider_id in zip(nodes.cluster_id, nodes.provider_id, strict=True)
        if provider_id.startswith("aws://")
    }
    out: dict[tuple[str, dt.date], float] = defaultdict(float)
    for bill in _aws_bills(deliveries):
        keep = (
            bill["line_item_resource_id"].isin(instance_cluster.keys())
            & bill["line_item_line_item_type"].isin(INSTANCE_TYPES.keys())
            & (bill["line_item_operation"].fillna("") != "EKSPod-EC2")
            & (bill["product_product_family"].fillna("") != "Data Transfer")
            & ~bill["line_item_usage_type"].fillna("").str.contains("DataTransfer")
        )
        for row in bill[keep].to_dict("records"):
            net_column, gross_column = INSTANCE_TYPES[row["line_item_line_item_type"]]
            cost = _number(row.get(net_column))
            if pd.isna(cost):
                cost = _number(row.get(gross_column))
            day = dt.date.fromisoformat(row["line_item_usage_start_date"][:10])
            out[(instance_cluster[row["line_item_resource_id"]], day)] += cost
    return out


def _read_ndjson(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _gcp(landing: Path, nodes: pd.DataFrame) -> dict:
    instance_cluster = {
        provider_id.rsplit("/", 1)[-1]: cluster
        for cluster, provider_id in zip(nodes.cluster_id, nodes.provider_id, strict=True)
        if provider_id.startswith("gce://")
    }
    node_cost: dict[tuple[str, str, dt.date], float] = defaultdict(float)  # (account, node, day)
    node_cud: dict[tuple[str, str, dt.date], float] = defaultdict(float)
    account_cud: dict[tuple[str, dt.date], float] = defaultdict(float)
    commitment_fees: dict[tuple[str, dt.date], float] = defaultdict(float)
    for path in sorted((landing / "billing" / "gcp").rglob("*.json*")):
        for row in _read_ndjson(path):
            if (row.get("service") or {}).get("description") != "Compute Engine":
                continue
            account = row["billing_account_id"]
            day = _utc_day(row["usage_start_time"])
            sku = (row.get("sku") or {}).get("description", "")
            if sku.startswith("Commitment"):
                commitment_fees[(account, day)] += float(row["cost"])
                continue
            name = (row.get("resource") or {}).get("name") or ""
            if "/instances/" not in name:
                continue
            credits = row.get("credits") or []
            cud = sum(
                float(c["amount"]) for c in credits if c.get("type") == "COMMITTED_USAGE_DISCOUNT"
            )
            account_cud[(account, day)] += cud
            instance = name.rsplit("/", 1)[-1]
            if instance not in instance_cluster:
                continue
            key = (account, instance, day)
            node_cost[key] += float(row["cost"]) + sum(float(c["amount"]) for c in credits)
            node_cud[key] += cud
    out: dict[tuple[str, dt.date], float] = defaultdict(float)
    for (account, instance, day), cost in node_cost.items():
        share = 0.0
        total_cud = account_cud.get((account, day), 0.0)
        if total_cud:
            share = (
                commitment_fees.get((account, day), 0.0)
                * node_cud[(account, instance, day)]
                / total_cud
            )
        out[(instance_cluster[instance], day)] += cost + share
    return out


def _azure(landing: Path, nodes: pd.DataFrame) -> dict:
    set_cluster: dict[str, str] = {}
    for cluster, provider_id in zip(nodes.cluster_id, nodes.provider_id, strict=True):
        if provider_id.startswith("azure://"):
            scale_set = provider_id.removeprefix("azure://").lower().split("/virtualmachines/")[0]
            set_cluster[scale_set] = cluster
    out: dict[tuple[str, dt.date], float] = defaultdict(float)
    for path in sorted((landing / "billing" / "azure").rglob("*.csv")):
        bill = pd.read_csv(path, dtype=str, keep_default_na=False)
        cost_column = "CostInBillingCurrency" if "CostInBillingCurrency" in bill else "Cost"
        for resource_id, date, cost in zip(
            bill["ResourceId"], bill["Date"], bill[cost_column], strict=True
        ):
            cluster = set_cluster.get(resource_id.lower())
            if cluster is None:
                continue
            day = dt.datetime.strptime(date, "%m/%d/%Y").date()
            out[(cluster, day)] += float(cost)
    return out


def _utc_day(stamp: str) -> dt.date:
    """The UTC day of an ISO 8601 timestamp, whatever offset it is written with."""
    moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.date()
