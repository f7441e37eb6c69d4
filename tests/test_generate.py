"""The demo-fleet generator: deterministic, scalable by its knobs, and faithful to the
landing-file contract (docs/landing-and-raw.md)."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import random
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from kubeledger.generate import Messiness, generate_fleet, generate_fleets, random_fleet_specs
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
    ".4.csv": [
        "interval_start",
        "node",
        "namespace",
        "pod",
        "gpu_uuid",
        "gpu_model_name",
        "gpu_vendor_name",
        "gpu_memory_capacity_mib",
        "gpu_pod_uptime",
    ],
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


# --- the messy fleet (issue 12 §2): one fixture long enough for every irregularity -------

MESSY = {"nodes": 12, "days": 33, "pods_per_node": 6}  # Oct 1 - Nov 2, billed through Oct 31


@pytest.fixture(scope="module")
def messy(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("messy")
    return out, generate_fleet(out, **MESSY)


@pytest.fixture(scope="module")
def tidy(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("tidy")
    return out, generate_fleet(out, messiness=Messiness.none(), **MESSY)


def _cur(root: Path, month: str) -> pd.DataFrame:
    return pd.read_parquet(root / f"billing/aws/{month}/acme-cur2-00001.snappy.parquet")


def _usage_days(landing: Path, cluster: str) -> set[str]:
    return {p.name for p in (landing / "usage" / cluster).iterdir()}


def _pod_rows(con, landing: Path, cluster: str = "*") -> pd.DataFrame:
    return con.execute(
        f"select * from read_csv('{landing}/usage/{cluster}/*/*.0.csv', union_by_name = true,"
        " all_varchar = true)"
    ).df()


def test_messiness_switches():
    assert all(vars(Messiness.all()).values())
    assert not any(vars(Messiness.none()).values())
    assert Messiness.none().on() == []
    assert Messiness.all().on()[0] == "shared_load_balancer"
    drawn = [Messiness.random(random.Random(5)) for _ in range(2)]
    assert drawn[0] == drawn[1]  # from the rng alone
    many = {Messiness.random(random.Random(n)) for n in range(40)}
    assert len(many) > 30
    assert Messiness.random(random.Random(1), p=1.0) == Messiness.all()


def test_tidy_fleet_has_none_of_it(tidy):
    out, summary = tidy
    assert summary["messiness"] == []
    assert summary["late_deliveries"] == []
    assert not (out / "late").exists()
    assert summary["overcommitted_node_hours"]["memory"] == 0
    assert len(_usage_days(out / "landing", "gke-analytics")) == 33
    assert "ownership:" not in (out / "kubeledger.yml").read_text()


def test_aks_services_share_one_load_balancer_billed_once(messy):
    out, summary = messy
    landing = out / "landing"
    services = pd.read_csv(landing / "cluster/aks-web/lb_services.csv")
    assert len(services) == 3
    assert services.load_balancer_id.nunique() == 1
    lb = services.load_balancer_id.iloc[0]
    assert lb.endswith("/providers/Microsoft.Network/loadBalancers/kubernetes")
    azure = pd.concat(pd.read_csv(p, dtype=str) for p in (landing / "billing/azure").rglob("*.csv"))
    lines = azure[azure.ResourceId.str.lower() == lb.lower()]
    # one line a day, Oct 1 - Oct 20 (decommissioned on the 20th), at 24 h x $0.025
    assert len(lines) == lines.Date.nunique() == 20
    assert set(lines.CostInBillingCurrency.astype(float)) == {0.6}
    aks = next(c for c in summary["clusters"] if c["cluster_id"] == "aks-web")
    assert aks["load_balancers"] == 1 and aks["load_balancer_services"] == 3


def test_a_cluster_scales_to_zero_for_a_weekend(messy):
    out, summary = messy
    landing = out / "landing"
    cluster, (saturday, sunday) = summary["irregularities"]["scale_to_zero"]
    assert cluster == "gke-analytics"
    weekend = [START + dt.timedelta(days=d) for d in (saturday, sunday)]
    assert [d.weekday() for d in weekend] == [5, 6]
    assert weekend[0] == dt.date(2026, 10, 10)
    days = _usage_days(landing, cluster)
    assert not {d.isoformat() for d in weekend} & days
    assert {"2026-10-09", "2026-10-12"} <= days
    gcp = pd.read_json(
        landing / "billing/gcp/2026-10/billing_export-000000000000.jsonl.gz", lines=True
    )
    gcp["day"] = pd.to_datetime(gcp.usage_start_time, utc=True).dt.date
    names = gcp.resource.map(lambda r: r.get("name") or "")
    on_weekend = gcp[gcp.day.isin(weekend)]
    assert not names[on_weekend.index].str.contains("/instances/gke-").any()  # no node billed
    assert names[on_weekend.index].str.contains("/disks/").sum() > 0  # the disks still are
    # nodes left Friday 22:00 UTC and new ones came up Monday 06:00 UTC
    nodes = pd.read_csv(landing / f"cluster/{cluster}/nodes.csv")
    first = pd.to_datetime(nodes.first_seen, utc=True)
    last = pd.to_datetime(nodes.last_seen, utc=True)
    assert (last == pd.Timestamp("2026-10-09 22:00", tz="UTC")).sum() >= 2
    assert (first == pd.Timestamp("2026-10-12 06:00", tz="UTC")).sum() >= 2
    assert not (
        (first < pd.Timestamp("2026-10-12", tz="UTC"))
        & (last > pd.Timestamp("2026-10-10", tz="UTC"))
    ).any()


def test_a_cluster_is_decommissioned_on_the_20th(messy):
    out, summary = messy
    landing = out / "landing"
    cluster, day = summary["irregularities"]["decommissioned"]
    assert (cluster, START + dt.timedelta(days=day)) == ("aks-web", dt.date(2026, 10, 20))
    assert max(_usage_days(landing, cluster)) == "2026-10-20"
    nodes = pd.read_csv(landing / f"cluster/{cluster}/nodes.csv")
    assert pd.to_datetime(nodes.last_seen, utc=True).dt.date.max() == dt.date(2026, 10, 20)
    azure = pd.concat(pd.read_csv(p, dtype=str) for p in (landing / "billing/azure").rglob("*.csv"))
    linked = azure[azure.ResourceGroup.str.lower() == "mc_rg-web_aks-web_eastus"]
    assert pd.to_datetime(linked.Date, format="%m/%d/%Y").max() == pd.Timestamp("2026-10-20")
    assert not (landing / "billing/azure/2026-11").exists() or not (
        pd.read_csv(next((landing / "billing/azure/2026-11").glob("*.csv")), dtype=str)
        .ResourceGroup.str.lower()
        .eq("mc_rg-web_aks-web_eastus")
        .any()
    )


def test_autoscaled_nodes_run_on_unbilled_days_beside_billed_peers(messy, con):
    out, summary = messy
    landing = out / "landing"
    autoscaled = summary["irregularities"]["autoscaled_nodes"]
    assert len(autoscaled) == 2  # eks-prod and gke-analytics (aks-web is gone by November)
    nodes = pd.concat(pd.read_csv(p) for p in (landing / "cluster").glob("*/nodes.csv"))
    new = nodes[nodes.node.isin(autoscaled)]
    assert (
        pd.to_datetime(new.first_seen, utc=True) == pd.Timestamp("2026-11-01 03:30", tz="UTC")
    ).all()
    labels = con.execute(
        f"select distinct node, node_labels from read_csv('{landing}/usage/*/*/*.2.csv')"
    ).df()
    labels["type"] = labels.node_labels.str.extract(
        r"label_node_kubernetes_io_instance_type:([^|]+)"
    )
    labels["pool"] = labels.node_labels.str.extract(
        r"label_(?:eks_amazonaws_com_nodegroup|cloud_google_com_gke_nodepool):([^|]+)"
    )
    cur = _cur(landing, "2026-10")
    instances = cur[cur.line_item_resource_id.fillna("").str.startswith("i-")]
    gcp = pd.read_json(
        landing / "billing/gcp/2026-10/billing_export-000000000000.jsonl.gz", lines=True
    )
    billed_gce = set(gcp.resource.map(lambda r: (r.get("name") or "").rsplit("/", 1)[-1]))
    november = list((landing / "billing").rglob("2026-11*"))
    assert not november  # nothing of November is billed
    for _, node in new.iterrows():
        peers = labels[
            (labels.type == labels[labels.node == node.node].type.item())
            & (labels.pool == labels[labels.node == node.node].pool.item())
            & ~labels.node.isin(autoscaled)
        ]
        assert len(peers) >= 1, node.node
        peer_ids = nodes[nodes.node.isin(peers.node)].provider_id.str.rsplit("/", n=1).str[-1]
        assert set(peer_ids) & (set(instances.line_item_resource_id) | billed_gce), node.node
        own = node.provider_id.rsplit("/", 1)[-1]
        assert own not in set(instances.line_item_resource_id) | billed_gce


def test_the_closed_month_is_restated_after_month_end(messy):
    out, summary = messy
    (delivery,) = summary["late_deliveries"]
    assert delivery["delivered_on"] == "2026-11-03"
    late = Path(delivery["landing"])
    assert late == out / "late/2026-11-03"
    original, restated = _cur(out / "landing", "2026-10"), _cur(late, "2026-10")
    # the same billing period and account: the loader replaces the month's rows with it
    for frame in (original, restated):
        assert set(frame.bill_billing_period_start_date) == {"2026-10-01T00:00:00Z"}
        assert set(frame.bill_payer_account_id) == {"111111111111"}
    manifests = [
        json.loads((root / "billing/aws/2026-10/acme-cur2-Manifest.json").read_text())
        for root in (out / "landing", late)
    ]
    assert manifests[1]["exportTime"] > manifests[0]["exportTime"] >= "2026-11-01"
    assert manifests[0]["billingPeriod"] == manifests[1]["billingPeriod"]

    def total(frame, where):
        return frame[where(frame)].line_item_unblended_cost.astype(float).sum()

    spot = lambda f: f.line_item_usage_type.fillna("").str.contains("SpotUsage")  # noqa: E731
    fee = lambda f: f.line_item_product_code == "AmazonEKS"  # noqa: E731
    assert total(restated, spot) == pytest.approx(1.04 * total(original, spot), rel=1e-9)
    assert total(original, spot) > 0
    assert total(restated, fee) == pytest.approx(total(original, fee), rel=1e-12)
    # October stays fully billed: every day of it has instance usage in the restatement
    days = set(restated.line_item_usage_start_date.str[:10])
    assert len(days) == 31


def test_eks_fee_rows_are_shaped_like_aws_writes_them(messy, tidy):
    out, _ = messy
    cur = _cur(out / "landing", "2026-10")
    fees = cur[cur.line_item_product_code == "AmazonEKS"]
    assert set(fees.line_item_usage_type) == {"USE1-AmazonEKS-Hours:perCluster"}
    assert set(fees.line_item_resource_id) == {
        "arn:aws:eks:us-east-1:111111111111:cluster/eks-prod"
    }
    assert not fees.resource_tags.str.contains("kubernetes_io_cluster").any()
    assert len(fees) == 31  # every day, the outage day included
    tidy_cur = _cur(tidy[0] / "landing", "2026-10")
    tidy_fees = tidy_cur[tidy_cur.line_item_product_code == "AmazonEKS"]
    assert tidy_fees.resource_tags.str.contains("user_kubernetes_io_cluster_eks_prod").all()


def test_timestamps_carry_offsets_but_the_same_instants(messy, tidy):
    out, _ = messy
    landing, tidy_landing = out / "landing", tidy[0] / "landing"
    path = "billing/gcp/2026-10/billing_export-000000000000.jsonl.gz"
    gcp = pd.read_json(landing / path, lines=True, dtype=False)
    assert gcp.usage_start_time.str.endswith("-07:00").all()  # Pacific daylight time
    start = pd.to_datetime(gcp.usage_start_time, utc=True)
    assert (start == start.dt.normalize()).all()  # still UTC midnights
    assert start.min() == pd.Timestamp("2026-10-01", tz="UTC")
    assert gcp.usage_start_time.min() == "2026-09-30T17:00:00-07:00"
    november = (
        pd.read_json(landing / path.replace("2026-10", "2026-11"), lines=True, dtype=False)
        if (landing / path.replace("2026-10", "2026-11")).exists()
        else None
    )
    assert november is None  # November is not billed in this fleet
    tidy_gcp = pd.read_json(tidy_landing / path, lines=True, dtype=False)
    assert tidy_gcp.usage_start_time.str.endswith("Z").all()
    assert sorted(pd.to_datetime(tidy_gcp.usage_start_time, utc=True).unique()) == sorted(
        start.unique()
    )
    # nodes.csv in Central European time (+02:00, +01:00 after Oct 25): same instants
    messy_nodes = pd.read_csv(landing / "cluster/onprem-dc1/nodes.csv")
    tidy_nodes = pd.read_csv(tidy_landing / "cluster/onprem-dc1/nodes.csv")
    assert messy_nodes.first_seen.str.endswith("+02:00").all()
    assert messy_nodes.last_seen.str.endswith("+01:00").all()
    assert tidy_nodes.first_seen.str.endswith("Z").all()
    for column in ("first_seen", "last_seen"):
        assert (
            pd.to_datetime(messy_nodes[column], utc=True)
            == pd.to_datetime(tidy_nodes[column], utc=True)
        ).all()


def test_bill_days_without_usage(messy, con):
    out, summary = messy
    landing = out / "landing"
    cluster, day = summary["irregularities"]["outage"]
    outage = START + dt.timedelta(days=day)
    assert (cluster, outage) == ("eks-prod", dt.date(2026, 10, 14))
    assert outage.isoformat() not in _usage_days(landing, cluster)
    cur = _cur(landing, "2026-10")
    that_day = cur[cur.line_item_usage_start_date.str.startswith(outage.isoformat())]
    assert that_day.line_item_resource_id.fillna("").str.startswith("i-").sum() >= 3
    cluster, node, day = summary["irregularities"]["silent_node"]
    silent = (START + dt.timedelta(days=day)).isoformat()
    assert cluster == "gke-analytics"
    folder = landing / "usage" / cluster / silent
    pods = con.execute(f"select distinct node from read_csv('{folder}/*.0.csv')").df()
    node_labels = con.execute(f"select distinct node from read_csv('{folder}/*.2.csv')").df()
    assert node not in set(pods.node) and node not in set(node_labels.node)
    assert len(pods) >= 1
    day_before = landing / "usage" / cluster / (START + dt.timedelta(days=day - 1)).isoformat()
    assert node in set(con.execute(f"select node from read_csv('{day_before}/*.0.csv')").df().node)
    gcp = pd.read_json(
        landing / "billing/gcp/2026-10/billing_export-000000000000.jsonl.gz", lines=True
    )
    gcp["day"] = pd.to_datetime(gcp.usage_start_time, utc=True).dt.date.astype(str)
    names = gcp.resource.map(lambda r: r.get("name") or "")
    assert ((gcp.day == silent) & names.str.endswith(f"/instances/{node}")).sum() == 2  # core, ram


def test_a_released_claims_volume_is_billed_after_the_cluster_stops_reporting_it(messy, tidy, con):
    out, summary = messy
    landing = out / "landing"
    cluster, claim, day = summary["irregularities"]["released_volume"]
    released = START + dt.timedelta(days=day)
    assert (cluster, released) == ("eks-prod", dt.date(2026, 10, 10))

    def storage(on: dt.date):
        folder = landing / "usage" / cluster / on.isoformat()
        return con.execute(f"select * from read_csv('{folder}/*.1.csv', all_varchar = true)").df()

    before = storage(released - dt.timedelta(days=1))
    (handle,) = set(before[before.persistentvolumeclaim == claim].csi_volume_handle)
    assert len(before[before.persistentvolumeclaim == claim]) == 24  # reported every hour
    for later in (released, released + dt.timedelta(days=5)):
        reports = storage(later)
        assert claim not in set(reports.persistentvolumeclaim) and len(reports) > 0
    # the volume is still billed, on the day of the release and after it
    cur = _cur(landing, "2026-10")
    billed = cur[cur.line_item_resource_id == handle]
    days = set(billed.line_item_usage_start_date.str[:10])
    assert {released.isoformat(), "2026-10-31"} <= days
    assert billed.line_item_unblended_cost.astype(float).gt(0).all()
    assert tidy[1]["irregularities"]["released_volume"] is None


def test_demo_config_maps_aliased_keys_and_pods_carry_them(messy, con):
    config = pytest.importorskip("kubeledger.config")
    out, _ = messy
    text = (out / "kubeledger.yml").read_text()
    assert 'selector: "app.kubernetes.io/name in (cart, checkout-worker)"' in text
    assert 'selector: "squad=discovery"' in text
    assert "notin (" in text and "cluster: gke-analytics" in text
    assert "aliases: {squad: team}" in text
    loaded = config.load_config(out / "kubeledger.yml")
    selectors = loaded.tables["selector_mappings"]
    assert [s["operator"] for s in selectors] == ["in", "in", "notin"]
    assert [s["cluster_id"] for s in selectors] == [None, None, "gke-analytics"]
    pods = _pod_rows(con, out / "landing", "eks-prod")
    labels = pods.pod_labels.fillna("")
    assert labels.str.contains(r"label_app_kubernetes_io_name:cart(?:\||$)").any()
    assert labels.str.contains(r"label_app_kubernetes_io_name:checkout-worker(?:\||$)").any()
    assert labels.str.contains(r"label_squad:discovery(?:\||$)").any()
    # the namespace mapping sits on checkout, whose every pod names its own team
    mappings = loaded.tables["namespace_mappings"]
    assert {(m["namespace"], m["team"]) for m in mappings} == {("checkout", "storefront")}
    assert {m["cluster_id"] for m in mappings} == {
        "eks-prod",
        "gke-analytics",
        "aks-web",
        "onprem-dc1",
    }
    checkout = _pod_rows(con, out / "landing")
    checkout = checkout[checkout.namespace == "checkout"]
    assert len(checkout) > 0
    assert checkout.pod_labels.str.contains(r"label_team:payments(?:\||$)").all()


def test_memory_is_overcommitted_on_some_node_hours(messy, tidy, con):
    out, summary = messy
    row = con.execute(
        f"""
        with node_hours as (
            select node, interval_start,
                   any_value(node_capacity_memory_byte_seconds) as capacity,
                   sum(greatest(pod_usage_memory_byte_seconds, pod_request_memory_byte_seconds))
                       as claimed,
                   count(*) filter (where pod_usage_memory_byte_seconds
                                    > pod_request_memory_byte_seconds) as bursting
            from read_csv('{out}/landing/usage/*/*/*.0.csv', union_by_name = true)
            group by all
        )
        select count(*) filter (where claimed > capacity), sum(bursting) from node_hours
        """
    ).fetchone()
    assert row[0] > 0
    assert row[0] == summary["overcommitted_node_hours"]["memory"]
    assert summary["overcommitted_node_hours"]["cpu"] > 0
    assert row[1] > row[0]
    assert tidy[1]["overcommitted_node_hours"]["memory"] == 0


# --- many fleets in one landing folder (the differential test's input) -------------------


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> tuple[Path, dict, list]:
    out = tmp_path_factory.mktemp("many")
    specs = random_fleet_specs(5, random.Random(12), days=35, min_nodes=3, max_nodes=4)
    return out, generate_fleets(out, specs), specs


def test_random_fleet_specs_cover_every_cloud():
    specs = random_fleet_specs(6, random.Random(4))
    assert random_fleet_specs(6, random.Random(4)) == specs
    assert {kind for spec in specs for kind in spec.kinds} == {"eks", "gke", "aks", "onprem"}
    assert len({spec.prefix for spec in specs}) == 6
    assert all(3 <= n <= 8 for spec in specs for n in spec.nodes)
    assert all(spec.days == 35 for spec in specs)
    assert len({spec.messiness for spec in specs}) > 1


def test_many_fleets_share_nothing_but_the_landing_folder(many, con):
    out, summary, specs = many
    landing = out / "landing"
    fleets = summary["fleets"]
    assert [f["prefix"] for f in fleets] == [s.prefix for s in specs]
    ids = [cid for f in fleets for cid in f["cluster_ids"]]
    assert len(ids) == len(set(ids))
    assert all(cid.startswith(f["prefix"] + "-") for f in fleets for cid in f["cluster_ids"])
    for key in ("aws_account", "gcp_project", "gcp_billing_account", "azure_subscription"):
        assert len({f["accounts"][key] for f in fleets}) == len(fleets), key
    assert {p.name for p in landing.iterdir()} == {s.prefix for s in specs}
    nodes = pd.concat(pd.read_csv(p, dtype=str) for p in landing.glob("*/cluster/*/nodes.csv"))
    assert set(nodes.cluster_id) == set(ids)
    assert nodes.node.is_unique
    provider = nodes.provider_id.dropna()
    assert provider.is_unique
    handles = con.execute(
        f"""select distinct _cluster, csi_volume_handle from (
            select split_part(filename, '/usage/', 2) as path,
                   split_part(path, '/', 1) as _cluster, csi_volume_handle
            from read_csv('{landing}/*/usage/*/*/*.1.csv', filename = true, all_varchar = true))"""
    ).df()
    assert handles.csi_volume_handle.is_unique and len(handles) > 0
    services = pd.concat(
        pd.read_csv(p, dtype=str) for p in landing.glob("*/cluster/*/lb_services.csv")
    )
    assert (services.groupby("load_balancer_id").cluster_id.nunique() == 1).all()
    cur = pd.concat(pd.read_parquet(p) for p in landing.glob("*/billing/aws/*/*.parquet"))
    eks = [cid for cid in ids if "-eks-" in cid]
    assert cur.bill_payer_account_id.nunique() == len({cid.split("-")[0] for cid in eks})


def test_many_fleets_have_one_config_and_their_own_switches(many):
    config = pytest.importorskip("kubeledger.config")
    out, summary, specs = many
    loaded = config.load_config(out / "kubeledger.yml")
    clusters = [c["cluster_id"] for c in loaded.tables["clusters"]]
    assert clusters == [cid for f in summary["fleets"] for cid in f["cluster_ids"]]
    text = (out / "kubeledger.yml").read_text()
    assert text.count("aliases:") == 1 and text.count("selector_mappings:") <= 1
    for fleet, spec in zip(summary["fleets"], specs, strict=True):
        assert fleet["messiness"] == spec.messiness.on()
        for cid, section in fleet["distribution"].items():
            assert f"    {cid}: {{preset: {section['preset']}" in text
        restated = fleet["irregularities"]["restated_month"]
        late = [
            f for d in summary["late_deliveries"] for f in d["files"] if f"/{fleet['prefix']}/" in f
        ]
        assert bool(late) == bool(restated)
    assert summary["pod_usage_rows"] > 0


def test_many_fleets_are_deterministic(tmp_path):
    specs = random_fleet_specs(2, random.Random(7), days=4, min_nodes=2, max_nodes=3)
    generate_fleets(tmp_path / "a", specs)
    generate_fleets(tmp_path / "b", specs)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    with pytest.raises(ValueError, match="prefix"):
        generate_fleets(tmp_path / "c", [specs[0], specs[0]])


def test_gpu_pools_write_the_operators_gpu_report(messy, con):
    """EKS gets a g5.12xlarge (4 A10G: three pods with a GPU each, two time-sharing the
    fourth) and a p4d.24xlarge (8 A100 under MIG: two 3g.20gb slices and a 1g.5gb on GPU 0, a
    7g.40gb on GPU 1), labelled as GPU feature discovery does; the GPU report has the
    operator's columns in its order, one row per pod, GPU and hour."""
    out, summary = messy
    landing = out / "landing"
    gpu_nodes = summary["irregularities"]["gpu_nodes"]
    assert len(gpu_nodes) == 2
    reports = sorted((landing / "usage" / "eks-prod").rglob("*.4.csv"))
    assert len(reports) == len(_usage_days(landing, "eks-prod"))
    assert not list((landing / "usage" / "gke-analytics").rglob("*.4.csv"))
    assert _csv_header(reports[0]) == [
        "report_period_start",
        "report_period_end",
        "interval_start",
        "interval_end",
        "node",
        "namespace",
        "pod",
        "gpu_uuid",
        "gpu_model_name",
        "gpu_vendor_name",
        "gpu_memory_capacity_mib",
        "gpu_pod_uptime",
        "gpu_max_slices",
        "mig_instance_id",
        "mig_profile",
        "mig_strategy",
    ]
    day = con.execute(f"select * from read_csv('{reports[0]}', all_varchar = true)").df()
    per_gpu = day.groupby(["gpu_model_name", "gpu_uuid"]).agg(
        pods=("pod", "nunique"), profiles=("mig_profile", lambda p: sorted(p.fillna("")))
    )
    a10g = per_gpu.loc["NVIDIA A10G"]
    assert sorted(a10g.pods) == [1, 1, 1, 2]  # three whole GPUs, one time-shared by two pods
    a100 = per_gpu.loc["NVIDIA A100-SXM4-40GB"]
    profiles = sorted(tuple(sorted(set(p))) for p in a100.profiles)
    assert profiles == [("1g.5gb", "3g.20gb"), ("7g.40gb",)]
    assert set(day.gpu_pod_uptime.astype(float)) == {3600.0}
    assert set(day.loc[day.mig_profile.notna(), "gpu_max_slices"]) == {"7"}
    labels = con.execute(
        f"select distinct node, node_labels from read_csv('{reports[0].parent}/*.2.csv')"
    ).df()
    labelled = labels[labels.node.isin(gpu_nodes)].node_labels
    assert labelled.str.contains("label_nvidia_com_gpu_count:4").sum() == 1
    assert labelled.str.contains("label_nvidia_com_gpu_count:8").sum() == 1
    # only GPU pods and the device plugin run on GPU nodes
    pods = con.execute(
        f"select distinct pod from read_csv('{reports[0].parent}/*.0.csv') "
        f"where node in ({', '.join(repr(n) for n in gpu_nodes)})"
    ).df()
    gpu_workloads = ("llm-inference-", "notebooks-", "embedder-", "reranker-", "trainer-")
    assert all(pod.startswith((*gpu_workloads, "nvidia-device-plugin-")) for pod in pods.pod)
    assert any(pod.startswith("nvidia-device-plugin-") for pod in pods.pod)
