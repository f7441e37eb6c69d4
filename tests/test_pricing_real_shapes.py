"""Pricing and scope on real-shaped inputs (issue 12 §1, bugs 1, 3, 4, 8, 9, 10), end to end.

One EKS cluster, landing files in the real formats (koku reports, the supplementary CSVs,
CUR 2.0). Its billing link lists two accounts and no tag or pattern. Hand-computed figures:

- Oct 5 (billed): nodes ip-a ($4.80 for 24 h, $0.20/h) and ip-b ($2.40, $0.10/h), both
  on-demand m5.xlarge; one network load balancer ($24.00) that three Services report → $8.00
  each, not $24 each (bug 1); the EKS control-plane fee, a real `AmazonEKS` row with the
  cluster's ARN and no tag ($2.40) → platform (bug 8); an unrelated $12.00 instance of the same
  account is not in scope (bug 9). In scope: 4.80 + 2.40 + 24.00 + 2.40 = $33.60.
- Oct 6 (not billed yet: the account's tax row spans the whole month and must not count, bug 4):
  ip-a runs 24 h at its last billed rate → $4.80; ip-new, new since the bill, m5.xlarge
  on-demand by its labels, gets its peers' median (0.20 + 0.10) / 2 = $0.15/h → $3.60 (bug 3).
  Its usage report writes `+0200 CEST` timestamps: 24 UTC hours of Oct 6, nothing on Oct 7
  (bug 10).
- Sep 20: ip-old ran in account 222222222222, whose export stopped that day: it must not hold
  Oct 5 back as unbilled (bug 4).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest

from tests.hourly_landing import GIB, POD_COLUMNS
from tests.warehouse_builder import build_warehouse, query

CLUSTER = "eks-prod"
ACCOUNT = "111111111111"
OLD_ACCOUNT = "222222222222"
NLB = "arn:aws:elasticloadbalancing:us-east-1:111111111111:loadbalancer/net/k8s-shared/0a1b2c3d"
EKS_ARN = f"arn:aws:eks:us-east-1:{ACCOUNT}:cluster/{CLUSTER}"

NODE_LABEL_COLUMNS = [
    "report_period_start",
    "report_period_end",
    "interval_start",
    "interval_end",
    "node",
    "node_labels",
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
# node → (instance ID, days it ran)
NODES = {
    "ip-a": ("i-0aaa", ["2026-10-05", "2026-10-06"]),
    "ip-b": ("i-0bbb", ["2026-10-05"]),
    "ip-new": ("i-0new", ["2026-10-06"]),
    "ip-old": ("i-0old", ["2026-09-20"]),
}
# the days whose reports a producer in Central European Summer Time wrote
CEST_DAYS = {"2026-10-06"}


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _koku_time(moment: dt.datetime, cest: bool) -> str:
    if cest:
        return (moment + dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S +0200 CEST")
    return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _usage_day(landing: Path, day: str, number: int) -> None:
    folder = landing / "usage" / CLUSTER / day
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "uuid": f"5f1e8a3c-0000-4000-8000-{number:012d}",
                "cluster_id": CLUSTER,
                "version": "3.3.0",
                "date": f"{day}T23:59:00Z",
                "files": ["pods.csv", "node-labels.csv"],
            }
        )
    )
    start = dt.datetime.fromisoformat(day)
    month = start.replace(day=1)
    following = (month + dt.timedelta(days=32)).replace(day=1)
    cest = day in CEST_DAYS
    pods, labels = [], []
    for node, (instance, days) in NODES.items():
        if day not in days:
            continue
        for hour in range(24):
            begin = start + dt.timedelta(hours=hour)
            period = {
                "report_period_start": _koku_time(month, cest),
                "report_period_end": _koku_time(following, cest),
                "interval_start": _koku_time(begin, cest),
                "interval_end": _koku_time(begin + dt.timedelta(minutes=59, seconds=59), cest),
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
                    "resource_id": instance,
                    "pod_labels": "label_team:shop",
                }
            )
            labels.append(
                {
                    **period,
                    "node_labels": "label_node_kubernetes_io_instance_type:m5.xlarge"
                    "|label_topology_kubernetes_io_region:us-east-1"
                    "|label_eks_amazonaws_com_capacityType:ON_DEMAND",
                }
            )
    _write_csv(folder / "pods.csv", POD_COLUMNS, pods)
    _write_csv(folder / "node-labels.csv", NODE_LABEL_COLUMNS, labels)


def _cur_line(payer: str, n: int, day: str, **fields: str | float) -> dict:
    start = dt.date.fromisoformat(day)
    month = start.replace(day=1)
    following = (month + dt.timedelta(days=32)).replace(day=1)
    cost = fields.pop("cost")
    line = {
        "bill_payer_account_id": payer,
        "bill_billing_period_start_date": f"{month}T00:00:00Z",
        "bill_billing_period_end_date": f"{following}T00:00:00Z",
        "identity_line_item_id": f"line-{payer}-{n}",
        "line_item_usage_account_id": payer,
        "line_item_line_item_type": "Usage",
        "line_item_usage_start_date": f"{day}T00:00:00Z",
        "line_item_usage_end_date": f"{start + dt.timedelta(days=1)}T00:00:00Z",
        "line_item_product_code": "AmazonEC2",
        "line_item_operation": "RunInstances",
        "line_item_usage_amount": 24,
        "line_item_currency_code": "USD",
        "line_item_unblended_cost": cost,
        "line_item_net_unblended_cost": cost,
        "product_region": "us-east-1",
        "product_product_family": "Compute Instance",
        "resource_tags": "{}",
    }
    line.update(fields)
    return line


def _instance(payer: str, n: int, day: str, instance: str, cost: str, kind: str) -> dict:
    return _cur_line(
        payer,
        n,
        day,
        line_item_usage_type=f"USE1-BoxUsage:{kind}",
        line_item_resource_id=instance,
        product_instance_type=kind,
        cost=cost,
    )


def _landing(root: Path) -> Path:
    landing = root / "landing"
    for number, day in enumerate(["2026-09-20", "2026-10-05", "2026-10-06"], start=1):
        _usage_day(landing, day, number)
    cluster = landing / "cluster" / CLUSTER
    _write_csv(
        cluster / "nodes.csv",
        ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
        [
            {
                "cluster_id": CLUSTER,
                "node": node,
                "provider_id": f"aws:///us-east-1a/{instance}",
                "first_seen": f"{days[0]}T00:00:00Z",
                "last_seen": f"{days[-1]}T23:59:59Z",
            }
            for node, (instance, days) in NODES.items()
        ],
    )
    _write_csv(
        cluster / "lb_services.csv",
        ["cluster_id", "namespace", "service", "load_balancer_id"],
        [
            {
                "cluster_id": CLUSTER,
                "namespace": namespace,
                "service": service,
                "load_balancer_id": NLB,
            }
            for namespace, service in [("shop", "cart"), ("shop", "checkout"), ("web", "frontend")]
        ],
    )
    day = "2026-10-05"
    _write_csv(
        landing / "billing" / "aws" / "2026-10" / "cur2-00001.csv",
        CUR_COLUMNS,
        [
            _instance(ACCOUNT, 1, day, "i-0aaa", "4.80", "m5.xlarge"),
            _instance(ACCOUNT, 2, day, "i-0bbb", "2.40", "m5.xlarge"),
            # an instance outside Kubernetes in the linked account
            _instance(ACCOUNT, 3, day, "i-0unrelated", "12.00", "m5.xlarge"),
            _cur_line(
                ACCOUNT,
                4,
                day,
                line_item_product_code="AWSELB",
                line_item_usage_type="USE1-LoadBalancerUsage",
                line_item_operation="LoadBalancing:Network",
                line_item_resource_id=NLB,
                product_product_family="Load Balancer-Network",
                cost="24.00",
            ),
            _cur_line(
                ACCOUNT,
                5,
                day,
                line_item_product_code="AmazonEKS",
                line_item_usage_type="USE1-AmazonEKS-Hours:perCluster",
                line_item_operation="CreateOperation",
                line_item_resource_id=EKS_ARN,
                product_product_family="Compute",
                cost="2.40",
            ),
            _cur_line(
                ACCOUNT,
                6,
                "2026-10-01",
                line_item_line_item_type="Tax",
                line_item_usage_end_date="2026-11-01T00:00:00Z",
                line_item_product_code="AmazonEC2",
                line_item_usage_type="",
                line_item_operation="",
                line_item_resource_id="",
                line_item_usage_amount=0,
                product_product_family="",
                cost="3.00",
            ),
        ],
    )
    _write_csv(
        landing / "billing" / "aws" / "2026-09" / "cur2-00001.csv",
        CUR_COLUMNS,
        [_instance(OLD_ACCOUNT, 1, "2026-09-20", "i-0old", "1.20", "m5.large")],
    )
    return landing


def _config() -> dict:
    return {
        "clusters": [
            {
                "id": CLUSTER,
                "provider": "aws",
                "billing_link": {"accounts": [ACCOUNT, OLD_ACCOUNT]},
            }
        ]
    }


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pricing_real_shapes")
    return build_warehouse(root, _landing(root), _config())


def test_shared_load_balancer_is_split_among_its_services(warehouse):
    rows = query(
        warehouse,
        """select namespace, service, round(load_balancer_cost, 9)
           from intermediate.int_load_balancer_costs_daily
           where usage_date = '2026-10-05' order by 1, 2""",
    )
    assert rows == [("shop", "cart", 8.0), ("shop", "checkout", 8.0), ("web", "frontend", 8.0)]


def test_scope_holds_the_cluster_objects_and_its_fee_only(warehouse):
    rows = query(
        warehouse,
        """select resource_key, scope_status, effective_cost
           from intermediate.int_billing_lines_scoped
           where charge_date = '2026-10-05' order by effective_cost, resource_key""",
    )
    assert [(key, status, str(cost)) for key, status, cost in rows] == [
        (EKS_ARN, "platform_fee", "2.4000000000"),
        ("i-0bbb", "matched", "2.4000000000"),
        ("i-0aaa", "matched", "4.8000000000"),
        (NLB, "matched", "24.0000000000"),
    ]


def test_cluster_day_categories(warehouse):
    [(billed, platform, unallocated, ledger)] = query(
        warehouse,
        """select billed_cost_in_scope, platform_cost, unallocated_cost, ledger_cost
           from marts.fct_cluster_costs_daily where usage_date = '2026-10-05'""",
    )
    assert billed == pytest.approx(33.60, abs=1e-9)
    assert platform == pytest.approx(2.40, abs=1e-9)  # the EKS fee; no platform pods
    assert unallocated == pytest.approx(0, abs=1e-9)
    assert ledger == pytest.approx(33.60, abs=1e-9)


def test_new_node_gets_its_peers_rate_on_an_unbilled_day(warehouse):
    rows = query(
        warehouse,
        """select node, pricing_basis, estimate_source, hours_run, round(node_cost, 9)
           from intermediate.int_node_costs_daily
           where usage_date = '2026-10-06' order by node""",
    )
    assert rows == [
        ("ip-a", "estimate", "last_billed_day", 24.0, 4.8),
        ("ip-new", "estimate", "instance_type_median", 24.0, 3.6),
    ]


def test_offset_timestamps_land_on_their_utc_day(warehouse):
    rows = query(
        warehouse,
        """select usage_date, count(distinct node), sum(hours_run)
           from intermediate.int_node_days where usage_date >= '2026-10-06' group by 1""",
    )
    assert rows == [(dt.date(2026, 10, 6), 2, 48.0)]


def test_billed_days_per_account(warehouse):
    rows = query(
        warehouse,
        "select usage_date, has_billing from marts.fct_reconciliation_daily order by 1",
    )
    assert rows == [
        (dt.date(2026, 9, 20), True),
        (dt.date(2026, 10, 5), True),  # the stopped export of 222222222222 holds nothing back
        (dt.date(2026, 10, 6), False),  # the month-long tax row does not bill Oct 6
    ]


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("2026-10-06 20:00:00 +0200 CEST", dt.datetime(2026, 10, 6, 18)),
        ("2026-10-07 01:00:00 +0700 +07", dt.datetime(2026, 10, 6, 18)),
        ("2026-10-06T13:00:00-05:00", dt.datetime(2026, 10, 6, 18)),
        ("2026-10-06 18:00:00 +0000 UTC", dt.datetime(2026, 10, 6, 18)),
        ("2026-10-06 20:00:00 CEST", None),  # no offset: quarantined, never read as wall time
    ],
)
def test_the_loader_reads_offsets_as_instants(text, utc):
    from kubeledger.load.sql import parse_timestamp_sql

    with duckdb.connect() as con:
        [(value,)] = con.execute(
            f"select timezone('UTC', {parse_timestamp_sql('v')}) from (select ? as v)", [text]
        ).fetchall()
    assert value == utc
