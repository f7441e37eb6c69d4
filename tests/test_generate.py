"""The demo-fleet generator: deterministic, scalable by its knobs, and faithful to the
landing-file contract (docs/landing-and-raw.md)."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from kubeledger.generate import generate_fleet
from tests.oracle import expected_node_compute_cost

TINY = {"nodes": 8, "days": 4}  # billed through day 2, which has spot replacements
START = dt.date(2026, 10, 1)

POD_COLUMNS = [
    "report_period_start",
    "report_period_end",
    "interval_start",
    "interval_end",
    "node",
    "namespace",
    "pod",
    "pod_usage_cpu_core_seconds",
    "pod_request_cpu_core_seconds",
    "pod_limit_cpu_core_seconds",
    "pod_usage_memory_byte_seconds",
    "pod_request_memory_byte_seconds",
    "pod_limit_memory_byte_seconds",
    "node_capacity_cpu_cores",
    "node_capacity_cpu_core_seconds",
    "node_capacity_memory_bytes",
    "node_capacity_memory_byte_seconds",
    "node_role",
    "resource_id",
    "pod_labels",
]
STORAGE_COLUMNS = [
    "report_period_start",
    "report_period_end",
    "interval_start",
    "interval_end",
    "namespace",
    "pod",
    "node",
    "persistentvolumeclaim",
    "persistentvolume",
    "storageclass",
    "csi_driver",
    "csi_volume_handle",
    "persistentvolumeclaim_capacity_bytes",
    "persistentvolumeclaim_capacity_byte_seconds",
    "volume_request_storage_byte_seconds",
    "persistentvolumeclaim_usage_byte_seconds",
    "persistentvolume_labels",
    "persistentvolumeclaim_labels",
]
# Required columns per format (docs/landing-and-raw.md, "Required columns").
REQUIRED = {
    ".0.csv": POD_COLUMNS[2:17] + ["resource_id", "pod_labels"],
    ".1.csv": STORAGE_COLUMNS[2:16],
    ".2.csv": ["interval_start", "node", "node_labels"],
    ".3.csv": ["interval_start", "namespace", "namespace_labels"],
    "nodes.csv": ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
    "owners.csv": ["cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name"],
    "lb_services.csv": ["cluster_id", "namespace", "service", "load_balancer_id"],
    "rate_card": [
        "cluster_id",
        "resource",
        "selector_type",
        "selector",
        "price",
        "unit",
        "currency",
        "effective_from",
    ],
    "azure": [
        "Date",
        "SubscriptionId",
        "ResourceId",
        "MeterCategory",
        "CostInBillingCurrency",
        "BillingAccountId",
        "BillingPeriodStartDate",
        "Quantity",
        "PricingModel",
        "AdditionalInfo",
        "Tags",
    ],
    "aws": [
        "bill_payer_account_id",
        "bill_billing_period_start_date",
        "line_item_usage_account_id",
        "line_item_line_item_type",
        "line_item_usage_start_date",
        "line_item_usage_end_date",
        "line_item_product_code",
        "line_item_usage_type",
        "line_item_resource_id",
        "line_item_usage_amount",
        "line_item_unblended_cost",
        "line_item_net_unblended_cost",
        "reservation_effective_cost",
        "savings_plan_savings_plan_effective_cost",
        "resource_tags",
    ],
    "gcp": [
        "billing_account_id",
        "service",
        "sku",
        "usage_start_time",
        "usage_end_time",
        "cost",
        "currency",
        "credits",
        "labels",
        "resource",
        "invoice",
        "usage",
    ],
}


def _digest(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _csv_header(path: Path) -> list[str]:
    return path.read_text().splitlines()[0].split(",")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("tiny")
    return out, generate_fleet(out, **TINY)


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def test_same_seed_gives_identical_files(tiny, tmp_path):
    out, _ = tiny
    generate_fleet(tmp_path / "again", **TINY)
    assert _digest(out) == _digest(tmp_path / "again")
    generate_fleet(tmp_path / "other", seed=8, **TINY)
    assert _digest(out) != _digest(tmp_path / "other")


def test_cluster_count_picks_the_kinds_in_order(tmp_path):
    summary = generate_fleet(tmp_path / "five", clusters=5, nodes=10, days=1)
    ids = [c["cluster_id"] for c in summary["clusters"]]
    assert ids == ["eks-prod", "gke-analytics", "aks-web", "onprem-dc1", "eks-prod-2"]
    assert sorted(p.name for p in (tmp_path / "five/landing/usage").iterdir()) == sorted(ids)
    summary = generate_fleet(tmp_path / "two", clusters=2, nodes=6, days=1)
    assert [c["cluster_id"] for c in summary["clusters"]] == ["eks-prod", "gke-analytics"]
    assert not (tmp_path / "two/landing/billing/azure").exists()


def test_scale_knobs_change_sizes(tiny, tmp_path):
    _, base = tiny
    # 8 nodes over 4 clusters: 2 each, the spot replacements come on top.
    assert sum(c["nodes"] for c in base["clusters"]) == 8
    assert base["files_by_format"]["manifest"] == 4 * 4
    more_nodes = generate_fleet(tmp_path / "n", nodes=16, days=4)
    assert sum(c["nodes"] for c in more_nodes["clusters"]) == 16
    assert more_nodes["pod_usage_rows"] > 1.5 * base["pod_usage_rows"]
    more_days = generate_fleet(tmp_path / "d", nodes=8, days=8)
    assert more_days["files_by_format"]["manifest"] == 4 * 8
    assert more_days["pod_usage_rows"] > 1.8 * base["pod_usage_rows"]
    denser = generate_fleet(tmp_path / "p", nodes=16, days=4, pods_per_node=30)
    assert denser["pod_usage_rows"] > 1.4 * more_nodes["pod_usage_rows"]


def test_usage_is_never_negative(tiny, con):
    out, summary = tiny
    pods = str(out / "landing/usage/*/*/*.0.csv")
    row = con.execute(
        f"""
        select count(*),
               min(least(pod_usage_cpu_core_seconds, pod_usage_memory_byte_seconds,
                         pod_request_cpu_core_seconds, pod_request_memory_byte_seconds)),
               count(*) filter (where pod_usage_cpu_core_seconds is null
                                or pod_usage_memory_byte_seconds is null)
        from read_csv('{pods}', union_by_name = true)
        """
    ).fetchone()
    assert row[0] == summary["pod_usage_rows"]
    assert row[1] >= 0
    assert row[2] == 0


def test_files_have_the_contract_columns(tiny):
    out, _ = tiny
    landing = out / "landing"
    usage = sorted((landing / "usage").rglob("*.csv"))
    assert usage
    for path in usage:
        header = _csv_header(path)
        suffix = path.name[-6:]
        assert set(REQUIRED[suffix]) <= set(header), path
        if suffix == ".0.csv":
            expected = [c for c in POD_COLUMNS if c != "node_role" or "onprem" not in str(path)]
            assert header == expected, path
        if suffix == ".1.csv":
            assert header == STORAGE_COLUMNS, path
    for name in ("nodes.csv", "owners.csv", "lb_services.csv"):
        for path in (landing / "cluster").glob(f"*/{name}"):
            assert _csv_header(path) == REQUIRED[name], path
    for path in (landing / "rate_card").glob("*.csv"):
        assert _csv_header(path) == REQUIRED["rate_card"]
    for path in (landing / "billing/azure").rglob("*.csv"):
        assert set(REQUIRED["azure"]) <= set(pd.read_csv(path, nrows=0).columns)
    for path in (landing / "billing/aws").rglob("*.parquet"):
        schema = pd.read_parquet(path).dtypes
        assert set(REQUIRED["aws"]) <= set(schema.index)
        assert all(str(kind) in ("object", "str", "string") for kind in schema), schema
    for path in (landing / "billing/gcp").rglob("*.jsonl.gz"):
        with gzip.open(path, "rt") as handle:
            first = json.loads(handle.readline())
        assert set(REQUIRED["gcp"]) <= set(first)
    for path in (landing / "usage").rglob("manifest.json"):
        manifest = json.loads(path.read_text())
        assert manifest["cluster_id"] == path.parent.parent.name
        assert all((path.parent / name).exists() for name in manifest["files"])


def test_onprem_reports_omit_node_role_and_label_the_control_plane(tiny):
    out, _ = tiny
    pod_report = next((out / "landing/usage/onprem-dc1").rglob("*.0.csv"))
    assert "node_role" not in _csv_header(pod_report)
    node_labels = next((out / "landing/usage/onprem-dc1").rglob("*.2.csv")).read_text()
    assert "label_node_role_kubernetes_io_control_plane:" in node_labels


def test_azure_billed_hours_equal_usage_hours(tiny, con):
    out, summary = tiny
    landing = out / "landing"
    usage = con.execute(
        f"""
        with node_hours as (
            select distinct
                node, interval_start,
                node_capacity_cpu_core_seconds / node_capacity_cpu_cores / 3600.0 as hours
            from read_csv('{landing}/usage/aks-web/*/*.0.csv', all_varchar = false)
        ),
        nodes as (
            select node, lower(split_part(provider_id, '/virtualMachines/', 1)) as scale_set
            from read_csv('{landing}/cluster/aks-web/nodes.csv')
        )
        select
            replace(nodes.scale_set, 'azure://', '') as scale_set,
            cast(strptime(left(interval_start, 10), '%Y-%m-%d') as date) as usage_date,
            sum(hours) as hours
        from node_hours inner join nodes using (node)
        group by all
        """
    ).df()
    billed = con.execute(
        f"""
        select lower(ResourceId) as scale_set, strptime(Date, '%m/%d/%Y')::date as usage_date,
               sum(Quantity::double) as hours
        from read_csv('{landing}/billing/azure/*/*.csv', all_varchar = true)
        where MeterCategory = 'Virtual Machines'
        group by all
        """
    ).df()
    through = dt.date.fromisoformat(summary["billed_through"])
    usage = usage[usage.usage_date.dt.date <= through]
    merged = usage.merge(billed, on=["scale_set", "usage_date"], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all(), merged
    assert len(merged) == 2 * (through - START).days + 2  # two scale sets, each billed day
    assert (merged.hours_x == merged.hours_y).all(), merged
    # A spot node was replaced mid-hour on a billed day: its hours are not whole.
    nodes = pd.read_csv(landing / "cluster/aks-web/nodes.csv")
    replaced = nodes[~nodes.first_seen.str.endswith("00:00:00Z")]
    assert len(replaced) >= 1
    assert replaced.first_seen.str[:10].min() <= summary["billed_through"]


def test_oracle_prices_every_billed_cloud_cluster_day(tiny):
    out, summary = tiny
    oracle = expected_node_compute_cost(out / "landing")
    through = dt.date.fromisoformat(summary["billed_through"])
    days = [START + dt.timedelta(days=n) for n in range((through - START).days + 1)]
    for cluster in ("eks-prod", "gke-analytics", "aks-web"):
        priced = oracle[oracle.cluster_id == cluster].set_index("usage_date").cost
        assert sorted(priced.index) == days, cluster
        assert (priced > 0).all(), cluster
    assert set(oracle.cluster_id) == {"eks-prod", "gke-analytics", "aks-web"}


def test_oracle_by_hand_for_one_eks_day(tiny):
    """eks-prod, day one: a control-plane m5.large on demand and a savings-plan m5.xlarge,
    24 hours each, at 97% after the enterprise discount."""
    out, _ = tiny
    oracle = expected_node_compute_cost(out / "landing")
    day_one = oracle[(oracle.cluster_id == "eks-prod") & (oracle.usage_date == START)].cost
    assert day_one.item() == pytest.approx(0.97 * (24 * 0.096 + 24 * 0.192 * 0.72), abs=1e-9)


def test_billing_links_select_cluster_lines_only(tiny, con):
    out, _ = tiny
    landing = out / "landing"
    gcp = con.execute(
        f"""
        select service.description as service, list_contains(
                   list_transform(labels, lambda l: l.key || '=' || l.value),
                   'goog-k8s-cluster-name=gke-analytics') as linked,
               resource.name as name
        from read_json('{landing}/billing/gcp/*/*.jsonl.gz')
        """
    ).df()
    assert not gcp[gcp.service == "Cloud SQL"].linked.any()
    assert gcp[gcp.name.fillna("").str.contains("/disks/")].linked.all()
    azure = pd.concat(pd.read_csv(p, dtype=str) for p in (landing / "billing/azure").rglob("*.csv"))
    linked = azure.ResourceId.str.lower().str.contains("/resourcegroups/mc_rg-web_aks-web_eastus/")
    assert set(azure[linked].MeterCategory) == {"Virtual Machines", "Storage", "Load Balancer"}
    assert set(azure[~linked].MeterCategory) == {"SQL Database"}


def test_usage_has_bursts_and_an_overcommitted_node_hour(tiny, con):
    out, _ = tiny
    row = con.execute(
        f"""
        with hours as (
            select node, interval_start, any_value(node_capacity_cpu_core_seconds) as capacity,
                   sum(greatest(pod_usage_cpu_core_seconds, pod_request_cpu_core_seconds))
                       as claimed,
                   count(*) filter (where pod_usage_cpu_core_seconds
                                    > pod_request_cpu_core_seconds) as bursting
            from read_csv('{out}/landing/usage/*/*/*.0.csv', union_by_name = true)
            group by all
        )
        select count(*) filter (where claimed > capacity), sum(bursting) from hours
        """
    ).fetchone()
    assert row[0] >= 3
    assert row[1] > 0


def test_some_pods_have_no_owner_rows(tiny):
    out, summary = tiny
    for cluster in summary["clusters"]:
        missing = cluster["pods_without_owner_rows"]
        assert missing
        owners = pd.read_csv(out / f"landing/cluster/{cluster['cluster_id']}/owners.csv")
        pods = set(owners[owners.kind == "Pod"].name)
        assert not pods & set(missing)
        assert not pods & set(cluster["bare_pods"])


def test_demo_config_validates(tiny):
    config = pytest.importorskip("kubeledger.config")
    out, _ = tiny
    loaded = config.load_config(out / "kubeledger.yml")
    assert [c["cluster_id"] for c in loaded.tables["clusters"]] == [
        "eks-prod",
        "gke-analytics",
        "aks-web",
        "onprem-dc1",
    ]
