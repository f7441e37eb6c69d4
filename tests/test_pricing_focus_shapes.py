"""Clusters priced from FOCUS as the clouds write it, and Azure's older shapes (issue 17 §1, 3, 4).

One build, landing files in the shapes users have:
- eks-focus (AWS), billed by an AWS Data Exports FOCUS 1.0 file with its `x_` columns
  (focus/aws-focus-1.0-2026-10.csv, daily rows, `Hrs`). Oct 5: ip-a (i-0aaa1111) on demand,
  EffectiveCost $4.80 for 24 Hrs; ip-b (i-0bbb2222) covered by a savings plan, BilledCost 0,
  EffectiveCost $2.40, its ListUnitPrice `n/a` (unreadable, optional: nulled, the row and its
  $2.40 kept, counted in data health); an unrelated i-0fff9999 ($4.80) of the same account is
  not in scope; a month-long tax row ($3.00) bills no day. Oct 6 is not billed: ip-a runs 24 h
  at its last billed rate 4.80 / 24 Hrs = $0.20/h -> $4.80 (needs the `Hrs` quantity read as
  hours).
- aks-focus (Azure), billed by Azure's FOCUS cost export (focus/azure-focus-1.0-2026-10.csv:
  `/providers/Microsoft.Billing/billingAccounts/8611537`, `/subscriptions/<guid>`). Oct 5: the
  scale set aks-nodepool1-12345678-vmss has an on-demand line ($4.608, 24 Hours) and a
  reservation-covered line ($2.88 amortized, 24 Hours); its two nodes ran 24 h each, so each
  costs (4.608 + 2.88) * 24 / 48 = $3.744. An OS disk ($0.50, no PersistentVolume) is selected
  by the link's tag within its subscription: unallocated. In scope: 7.488 + 0.50 = $7.988.
- The legacy pay-as-you-go Azure usage export and an MCA file naming the resource
  `instanceName` (azure/legacy-payg-usage-2025-02.csv, azure/mca-instance-name-2026-10.csv)
  become billing lines of the same shape as today's Azure export.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from tests.hourly_landing import GIB, POD_COLUMNS
from tests.warehouse_builder import build_warehouse, query

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples"
SUBSCRIPTION = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
SCALE_SET = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/mc_rg-focus_aks-focus_eastus/providers/"
    "Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1-12345678-vmss"
)
# cluster -> node -> (provider ID, operator resource_id, days it ran)
CLUSTERS = {
    "eks-focus": {
        "ip-a": ("aws:///us-east-1a/i-0aaa1111", "i-0aaa1111", ["2026-10-05", "2026-10-06"]),
        "ip-b": ("aws:///us-east-1b/i-0bbb2222", "i-0bbb2222", ["2026-10-05"]),
    },
    "aks-focus": {
        f"aks-nodepool1-12345678-vmss00000{n}": (
            f"azure://{SCALE_SET}/virtualMachines/{n}",
            str(n),
            ["2026-10-05"],
        )
        for n in (0, 1)
    },
}
NODE_LABEL_COLUMNS = [
    "report_period_start",
    "report_period_end",
    "interval_start",
    "interval_end",
    "node",
    "node_labels",
]


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _koku_time(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _usage_day(landing: Path, cluster: str, day: str, number: int) -> None:
    folder = landing / "usage" / cluster / day
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "uuid": f"5f1e8a3c-0000-4000-8000-{number:012d}",
                "cluster_id": cluster,
                "version": "3.3.0",
                "date": f"{day}T23:59:00Z",
                "files": ["pods.csv", "node-labels.csv"],
            }
        )
    )
    start = dt.datetime.fromisoformat(day)
    month = start.replace(day=1)
    following = (month + dt.timedelta(days=32)).replace(day=1)
    pods, labels = [], []
    for node, (_, resource_id, days) in CLUSTERS[cluster].items():
        if day not in days:
            continue
        for hour in range(24):
            begin = start + dt.timedelta(hours=hour)
            period = {
                "report_period_start": _koku_time(month),
                "report_period_end": _koku_time(following),
                "interval_start": _koku_time(begin),
                "interval_end": _koku_time(begin + dt.timedelta(minutes=59, seconds=59)),
                "node": node,
            }
            pods.append(
                {
                    **period,
                    "namespace": "shop",
                    "pod": f"{node}-worker",
                    "pod_usage_cpu_core_seconds": 2 * 3600,
                    "pod_request_cpu_core_seconds": 2 * 3600,
                    "pod_limit_cpu_core_seconds": 2 * 3600,
                    "pod_usage_memory_byte_seconds": 8 * GIB * 3600,
                    "pod_request_memory_byte_seconds": 8 * GIB * 3600,
                    "pod_limit_memory_byte_seconds": 8 * GIB * 3600,
                    "node_capacity_cpu_cores": 4,
                    "node_capacity_cpu_core_seconds": 4 * 3600,
                    "node_capacity_memory_bytes": 16 * GIB,
                    "node_capacity_memory_byte_seconds": 16 * GIB * 3600,
                    "node_role": "worker",
                    "resource_id": resource_id,
                    "pod_labels": "label_team:shop",
                }
            )
            labels.append(
                {**period, "node_labels": "label_node_kubernetes_io_instance_type:m5.xlarge"}
            )
    _write_csv(folder / "pods.csv", POD_COLUMNS, pods)
    _write_csv(folder / "node-labels.csv", NODE_LABEL_COLUMNS, labels)


def _landing(root: Path) -> Path:
    landing = root / "landing"
    number = 0
    for cluster, nodes in CLUSTERS.items():
        days = sorted({day for _, _, node_days in nodes.values() for day in node_days})
        for day in days:
            number += 1
            _usage_day(landing, cluster, day, number)
        _write_csv(
            landing / "cluster" / cluster / "nodes.csv",
            ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
            [
                {
                    "cluster_id": cluster,
                    "node": node,
                    "provider_id": provider_id,
                    "first_seen": f"{node_days[0]}T00:00:00Z",
                    "last_seen": f"{node_days[-1]}T23:59:59Z",
                }
                for node, (provider_id, _, node_days) in nodes.items()
            ],
        )
    for sample in (
        "focus/aws-focus-1.0-2026-10.csv",
        "focus/azure-focus-1.0-2026-10.csv",
        "azure/legacy-payg-usage-2025-02.csv",
        "azure/mca-instance-name-2026-10.csv",
    ):
        target = landing / "billing" / sample
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / sample, target)
    return landing


def _config() -> dict:
    return {
        "clusters": [
            {
                "id": "eks-focus",
                "provider": "aws",
                "billing_link": {"accounts": ["123456789012"]},
            },
            {
                "id": "aks-focus",
                "provider": "azure",
                "billing_link": {
                    "accounts": [SUBSCRIPTION],
                    "tags": ["aks-managed-cluster-name=aks-focus"],
                },
            },
        ]
    }


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pricing_focus_shapes")
    return build_warehouse(root, _landing(root), _config())


def test_eks_nodes_are_priced_from_aws_focus_effective_cost(warehouse):
    rows = query(
        warehouse,
        """select usage_date, node, pricing_basis, estimate_source, purchase_option,
                  round(node_cost, 9)
           from intermediate.int_node_costs_daily
           where cluster_id = 'eks-focus' order by usage_date, node""",
    )
    assert rows == [
        (dt.date(2026, 10, 5), "ip-a", "bill", None, "on_demand", 4.8),
        (dt.date(2026, 10, 5), "ip-b", "bill", None, "savings_plan", 2.4),
        (dt.date(2026, 10, 6), "ip-a", "estimate", "last_billed_day", "on_demand", 4.8),
    ]


def test_aks_nodes_share_the_scale_set_cost_of_azure_focus(warehouse):
    rows = query(
        warehouse,
        """select node, pricing_basis, round(node_cost, 9)
           from intermediate.int_node_costs_daily
           where cluster_id = 'aks-focus' and usage_date = '2026-10-05' order by node""",
    )
    assert rows == [
        ("aks-nodepool1-12345678-vmss000000", "bill", 3.744),
        ("aks-nodepool1-12345678-vmss000001", "bill", 3.744),
    ]


def test_azure_focus_accounts_are_the_ids_inside_the_resource_paths(warehouse):
    rows = query(
        warehouse,
        """select scope_status, billing_account_id, sub_account_id, effective_cost
           from intermediate.int_billing_lines_scoped
           where cluster_id = 'aks-focus' order by effective_cost""",
    )
    assert [(status, account, sub, str(cost)) for status, account, sub, cost in rows] == [
        ("unallocated", "8611537", SUBSCRIPTION, "0.5000000000"),
        ("matched", "8611537", SUBSCRIPTION, "2.8800000000"),
        ("matched", "8611537", SUBSCRIPTION, "4.6080000000"),
    ]
    [(billed,)] = query(
        warehouse,
        """select billed_cost_in_scope from marts.fct_cluster_costs_daily
           where cluster_id = 'aks-focus' and usage_date = '2026-10-05'""",
    )
    assert billed == pytest.approx(7.988, abs=1e-9)


def test_an_unreadable_optional_value_is_counted_in_data_health_and_its_cost_kept(warehouse):
    rows = query(
        warehouse,
        """select usage_date, quarantined_rows, unreadable_optional_values
           from marts.fct_data_health_daily where cluster_id = 'eks-focus' order by 1""",
    )
    assert rows == [(dt.date(2026, 10, 5), 0, 1), (dt.date(2026, 10, 6), 0, 0)]
    [(billed,)] = query(
        warehouse,
        """select billed_cost_in_scope from marts.fct_cluster_costs_daily
           where cluster_id = 'eks-focus' and usage_date = '2026-10-05'""",
    )
    assert billed == pytest.approx(7.20, abs=1e-9)  # 4.80 + 2.40: the SP row's cost is kept


def test_older_azure_shapes_become_the_same_billing_lines(warehouse):
    rows = query(
        warehouse,
        """select source_file, charge_date, billing_account_id, sub_account_id, resource_key,
                  resource_type, service_category, usage_hours, effective_cost, currency,
                  azure_vm_instance, charge_category, counts_as_resource_cost
           from staging.stg_azure__billing_lines order by source_file, source_row_number""",
    )
    legacy_sub = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"
    legacy_rg = f"/subscriptions/{legacy_sub}/resourcegroups/mc_rg-legacy_aks-legacy_westeurope"
    mca_sub = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
    assert [(*row[:8], Decimal(row[8]).normalize(), *row[9:]) for row in rows] == [
        (
            "billing/azure/legacy-payg-usage-2025-02.csv",
            dt.date(2025, 2, 11),
            legacy_sub,
            legacy_sub,
            f"{legacy_rg}/providers/microsoft.compute/virtualmachinescalesets/"
            "aks-agentpool-55667788-vmss",
            "instance",
            "compute",
            48.0,
            Decimal("11.04"),
            "EUR",
            "aks-agentpool-55667788-vmss_0",
            # no ChargeType in the legacy export: every row is usage, a resource's own cost
            "usage",
            True,
        ),
        (
            "billing/azure/legacy-payg-usage-2025-02.csv",
            dt.date(2025, 2, 11),
            legacy_sub,
            legacy_sub,
            f"{legacy_rg}/providers/microsoft.compute/disks/"
            "pvc-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
            "volume",
            "storage",
            None,
            Decimal("0.64"),
            "EUR",
            None,
            "usage",
            True,
        ),
        (
            "billing/azure/mca-instance-name-2026-10.csv",
            dt.date(2026, 10, 6),
            "a1b2c3d4-aaaa-bbbb-cccc-0123456789ab:11111111-2222-3333-4444-555555555555_2019-05-31",
            mca_sub,
            f"/subscriptions/{mca_sub}/resourcegroups/mc_rg-mca_aks-mca_northeurope/providers/"
            "microsoft.compute/virtualmachinescalesets/aks-system-99887766-vmss",
            "instance",
            "compute",
            24.0,
            Decimal("2.304"),
            "USD",
            "aks-system-99887766-vmss_0",
            "usage",
            True,
        ),
    ]
