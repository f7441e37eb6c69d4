"""SPEC §8's worked example, built from landing files in the real formats.

One EKS cluster's in-scope bill is $900 for the day: an $800 node whose pods are $600 of
team-labelled workloads (they use exactly what they request, so no workload idle) and $200 of
`kube-system` and `monitoring`, plus a $100 EBS volume tagged for the cluster that no
PersistentVolume claims. The same account has $100 of RDS, which is in no figure.
Expected: direct $600, platform $200, unallocated $100 listed with the volume's ID;
reconciled 100%; ownership coverage 800 / 900 = 88.9% under the default policy, and still
88.9% under `proportional` (the orphan volume stays unallocated).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.warehouse_builder import build_warehouse, query

DAY = "2026-10-05"
GIB = 1024**3
CLUSTER = "example"
ACCOUNT = "111111111111"

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
CUR_COLUMNS = [
    "bill_payer_account_id",
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
    "identity_line_item_id",
    "line_item_usage_account_id",
    "line_item_line_item_type",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_currency_code",
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "product_instance_type",
    "product_region",
    "product_product_family",
    "resource_tags",
]
# (namespace, pod, cores, GiB, labels): 1.5 + 1.5 + 0.5 + 0.5 = 4 cores of 4, 6+6+2+2 of 16 GiB
PODS = [
    ("shop", "checkout-7d9f8b6c5d-x7k2p", 1.5, 6, "label_team:payments|label_app:checkout"),
    ("search", "search-0", 1.5, 6, "label_team:search"),
    ("kube-system", "coredns-5c4b8d9f7b-q2w4z", 0.5, 2, "label_k8s_app:kube-dns"),
    ("monitoring", "prometheus-0", 0.5, 2, "label_app:prometheus"),
]


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _landing(root: Path) -> Path:
    landing = root / "landing"
    usage = landing / "usage" / CLUSTER / DAY
    usage.mkdir(parents=True)
    (usage / "manifest.json").write_text(
        json.dumps(
            {
                "uuid": "5f1e8a3c-0000-4000-8000-000000000001",
                "cluster_id": CLUSTER,
                "version": "3.3.0",
                "date": f"{DAY}T23:59:00Z",
                "files": ["pods.csv"],
            }
        )
    )
    rows = []
    for hour in range(24):
        start = f"{DAY} {hour:02d}:00:00 +0000 UTC"
        end = f"{DAY} {hour:02d}:59:59 +0000 UTC"
        for namespace, pod, cores, gib, labels in PODS:
            rows.append(
                {
                    "report_period_start": "2026-10-01 00:00:00 +0000 UTC",
                    "report_period_end": "2026-11-01 00:00:00 +0000 UTC",
                    "interval_start": start,
                    "interval_end": end,
                    "node": "ip-10-0-0-1",
                    "namespace": namespace,
                    "pod": pod,
                    "pod_usage_cpu_core_seconds": cores * 3600,
                    "pod_request_cpu_core_seconds": cores * 3600,
                    "pod_limit_cpu_core_seconds": cores * 3600,
                    "pod_usage_memory_byte_seconds": gib * GIB * 3600,
                    "pod_request_memory_byte_seconds": gib * GIB * 3600,
                    "pod_limit_memory_byte_seconds": gib * GIB * 3600,
                    "node_capacity_cpu_cores": 4,
                    "node_capacity_cpu_core_seconds": 4 * 3600,
                    "node_capacity_memory_bytes": 16 * GIB,
                    "node_capacity_memory_byte_seconds": 16 * GIB * 3600,
                    "node_role": "worker",
                    "resource_id": "i-0example",
                    "pod_labels": labels,
                }
            )
    _write_csv(usage / "pods.csv", POD_COLUMNS, rows)
    _write_csv(
        landing / "cluster" / CLUSTER / "nodes.csv",
        ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
        [
            {
                "cluster_id": CLUSTER,
                "node": "ip-10-0-0-1",
                "provider_id": "aws:///us-east-1a/i-0example",
                "first_seen": f"{DAY}T00:00:00Z",
                "last_seen": f"{DAY}T23:59:59Z",
            }
        ],
    )
    tagged = json.dumps({f"user_kubernetes_io_cluster_{CLUSTER}": "owned"})

    def line(
        n: int,
        product: str,
        usage_type: str,
        resource: str,
        amount: float,
        cost: str,
        family: str,
        tags: str,
        instance_type: str = "",
    ) -> dict:
        return {
            "bill_payer_account_id": ACCOUNT,
            "bill_billing_period_start_date": "2026-10-01T00:00:00Z",
            "bill_billing_period_end_date": "2026-11-01T00:00:00Z",
            "identity_line_item_id": f"line-{n}",
            "line_item_usage_account_id": ACCOUNT,
            "line_item_line_item_type": "Usage",
            "line_item_usage_start_date": f"{DAY}T00:00:00Z",
            "line_item_usage_end_date": "2026-10-06T00:00:00Z",
            "line_item_product_code": product,
            "line_item_usage_type": usage_type,
            "line_item_operation": "RunInstances" if product == "AmazonEC2" else "",
            "line_item_resource_id": resource,
            "line_item_usage_amount": amount,
            "line_item_currency_code": "USD",
            "line_item_unblended_cost": cost,
            "line_item_net_unblended_cost": cost,
            "product_instance_type": instance_type,
            "product_region": "us-east-1",
            "product_product_family": family,
            "resource_tags": tags,
        }

    _write_csv(
        landing / "billing" / "aws" / "2026-10" / "cur2-00001.csv",
        CUR_COLUMNS,
        [
            line(
                1,
                "AmazonEC2",
                "USE1-BoxUsage:m5.xlarge",
                "i-0example",
                24,
                "800.00",
                "Compute Instance",
                tagged,
                "m5.xlarge",
            ),
            line(
                2,
                "AmazonEC2",
                "USE1-EBS:VolumeUsage.gp3",
                "vol-0orphan",
                100,
                "100.00",
                "Storage",
                tagged,
            ),
            line(
                3,
                "AmazonRDS",
                "USE1-InstanceUsage:db.r6g.large",
                "arn:aws:rds:us-east-1:111111111111:db:orders",
                24,
                "100.00",
                "Database Instance",
                "{}",
            ),
        ],
    )
    return landing


def _config(preset: str) -> dict:
    return {
        "clusters": [
            {
                "id": CLUSTER,
                "provider": "aws",
                "billing_link": {
                    "accounts": [ACCOUNT],
                    "tags": [f"kubernetes.io/cluster/{CLUSTER}"],
                },
            }
        ],
        "distribution": {"preset": preset},
    }


@pytest.fixture(scope="module")
def example_default(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("worked_example_default")
    return build_warehouse(root, _landing(root), _config("platform_absorbs"))


def test_categories(example_default):
    [(billed, direct, idle, platform, infra_idle, unallocated, ledger)] = query(
        example_default,
        """select billed_cost_in_scope, direct_cost, workload_idle_cost, platform_cost,
                  infrastructure_idle_cost, unallocated_cost, ledger_cost
           from marts.fct_cluster_costs_daily where cluster_id = ? and usage_date = ?""",
        [CLUSTER, DAY],
    )
    assert billed == pytest.approx(900, abs=1e-6)  # the RDS $100 is not in scope
    assert direct == pytest.approx(600, abs=1e-6)
    assert idle == pytest.approx(0, abs=1e-6)
    assert platform == pytest.approx(200, abs=1e-6)
    assert infra_idle == pytest.approx(0, abs=1e-6)
    assert unallocated == pytest.approx(100, abs=1e-6)
    assert ledger == pytest.approx(900, abs=1e-6)


def test_unallocated_volume_listed_with_its_id(example_default):
    rows = query(
        example_default,
        "select resource_id, unallocated_reason, unallocated_cost "
        "from marts.fct_unallocated_resources_daily",
    )
    assert rows == [("vol-0orphan", "no_kubernetes_object", pytest.approx(100, abs=1e-6))]


def test_figures_default_policy(example_default):
    [(in_scope, reconciled_cost, owned, reconciled, coverage, ids, match_ratio)] = query(
        example_default,
        """select cost_in_scope, reconciled_cost, owned_cost, reconciled_ratio,
                  ownership_coverage_ratio, unallocated_resource_ids, match_ratio
           from marts.fct_reconciliation_daily where cluster_id = ?""",
        [CLUSTER],
    )
    assert in_scope == pytest.approx(900, abs=1e-6)
    assert reconciled_cost == pytest.approx(900, abs=1e-6)
    assert reconciled == 1.0  # exact by construction, shown as 1.0, not 0.9999999999999996
    assert round(coverage * 100, 1) == 88.9
    assert owned == pytest.approx(800, abs=1e-6)
    assert coverage == 0.888889  # 800 / 900, rounded to six decimals where a person reads it
    assert ids == "vol-0orphan"
    assert match_ratio == 1.0


def test_rds_is_out_of_scope(example_default):
    rows = query(
        example_default,
        "select out_of_scope_category, sum(out_of_scope_cost) "
        "from marts.fct_out_of_scope_costs_daily group by 1",
    )
    assert rows == [("other_service", pytest.approx(100))]


def test_platform_kept_by_the_platform_owner(example_default):
    rows = query(
        example_default,
        """select team, owner_status, round(sum(total_cost), 6)
                    from marts.fct_owner_costs_daily group by 1, 2 order by 1, 2""",
    )
    assert rows == [
        ("payments", "owned", 300.0),
        ("platform", "owned", 200.0),
        ("search", "owned", 300.0),
        ("unallocated", "unallocated", 100.0),
    ]


def test_proportional_policy_keeps_coverage(tmp_path):
    db = build_warehouse(tmp_path, _landing(tmp_path), _config("proportional"))
    [(owned, coverage)] = query(
        db, "select owned_cost, ownership_coverage_ratio from marts.fct_reconciliation_daily"
    )
    assert owned == pytest.approx(800, abs=1e-6)
    assert coverage == 0.888889
    rows = query(
        db,
        """select team, round(sum(platform_share_cost), 6)
                    from marts.fct_owner_costs_daily where platform_share_cost > 0
                    group by 1 order by 1""",
    )
    assert rows == [("payments", 100.0), ("search", 100.0)]
