"""End to end on a generated multi-cloud fleet (AWS CUR 2.0, Google Cloud, Azure, on-prem).

The fleet is built once per module: generated landing files → loader → dbt build (every
model, every data test). Node costs must equal, to the cent, the net amortized compute cost
computed straight from the generated bill files by an independent oracle (tests/oracle.py);
EKS split-cost rows and the managed database must be in no node cost; every cluster-day's
categories add up to its cost in scope.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest

from kubeledger.generate import Messiness, generate_fleet
from kubeledger.warehouse import run_dbt
from tests.oracle import expected_node_compute_cost
from tests.warehouse_builder import build_warehouse, late_folders, query

MONTH_START, MONTH_END = dt.date(2026, 10, 1), dt.date(2026, 10, 31)


def cents(value: float | Decimal) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


# The messy fleet, but for bill days without usage: the oracle prices every billed node-day,
# and such a day's lines are unallocated (`no_usage`), which tests/test_differential.py checks.
MESSINESS = dataclasses.replace(Messiness.all(), bill_days_without_usage=False)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fleet")
    summary = generate_fleet(root, nodes=12, days=33, pods_per_node=8, messiness=MESSINESS)
    late = late_folders(summary)
    db = build_warehouse(root, root / "landing", root / "kubeledger.yml", late=late)
    return root, db, late


def test_node_costs_equal_the_bill_to_the_cent(fleet):
    root, db, late = fleet
    oracle = expected_node_compute_cost(root / "landing", late)
    days = oracle.usage_date.map(lambda day: dt.date.fromisoformat(str(day)[:10]))
    oracle = oracle[(days >= MONTH_START) & (days <= MONTH_END)]
    expected = {
        cluster: cents(cost) for cluster, cost in oracle.groupby("cluster_id")["cost"].sum().items()
    }
    got = {
        cluster: cents(cost)
        for cluster, cost in query(
            db,
            """select cluster_id, sum(node_cost) from marts.fct_node_costs_daily
           where usage_date between ? and ? and pricing_basis = 'bill'
           group by cluster_id""",
            [MONTH_START, MONTH_END],
        )
    }
    assert set(expected) == {"eks-prod", "gke-analytics", "aks-web"}
    for cluster, amount in expected.items():
        assert amount > 0
        assert got[cluster] == amount, cluster


def test_the_restated_cur_replaces_octobers_first_export(fleet):
    root, db, late = fleet
    assert late, "the messy fleet delivers a restated CUR after month end"

    def october_eks(oracle) -> Decimal:
        days = oracle.usage_date.map(lambda day: dt.date.fromisoformat(str(day)[:10]))
        oracle = oracle[(days >= MONTH_START) & (days <= MONTH_END)]
        return cents(oracle[oracle.cluster_id == "eks-prod"]["cost"].sum())

    first = october_eks(expected_node_compute_cost(root / "landing"))
    restated = october_eks(expected_node_compute_cost(root / "landing", late))
    [(got,)] = query(
        db,
        """select sum(node_cost) from marts.fct_node_costs_daily
           where cluster_id = 'eks-prod' and usage_date between ? and ?
             and pricing_basis = 'bill'""",
        [MONTH_START, MONTH_END],
    )
    assert first != restated
    assert cents(got) == restated


def test_every_cloud_node_day_of_a_billed_month_is_priced_from_the_bill(fleet):
    _, db, _ = fleet
    rows = query(
        db,
        """select cluster_id, pricing_basis, count(*) from marts.fct_node_costs_daily
           where usage_date between ? and ? group by 1, 2 order by 1, 2""",
        [MONTH_START, MONTH_END],
    )
    assert {(cluster, basis) for cluster, basis, _ in rows} == {
        ("aks-web", "bill"),
        ("eks-prod", "bill"),
        ("gke-analytics", "bill"),
        ("onprem-dc1", "rate_card"),
    }


def test_split_cost_rows_and_the_database_are_in_no_node_cost(fleet):
    _, db, _ = fleet
    [(split_rows, in_scope)] = query(
        db,
        """select count(*), count(scoped.billing_line_id)
           from marts.fct_billing_lines as lines
           left join intermediate.int_billing_lines_scoped as scoped
               on lines.billing_line_id = scoped.billing_line_id
           where lines.is_split_cost_row
              or lines.service_name in ('AmazonRDS', 'Cloud SQL', 'SQL Database')""",
    )
    assert split_rows > 0
    assert in_scope == 0


def test_days_after_the_export_are_estimates(fleet):
    _, db, _ = fleet
    rows = query(
        db,
        """select distinct usage_date from marts.fct_node_costs_daily
           where pricing_basis = 'estimate' order by 1""",
    )
    # 33 days from Oct 1 end on Nov 2; the export covers all but the last two days
    assert [day for (day,) in rows] == [dt.date(2026, 11, 1), dt.date(2026, 11, 2)]


def test_purchase_options_come_from_the_bill(fleet):
    _, db, _ = fleet
    options = {
        row[0]
        for row in query(
            db,
            "select distinct purchase_option from marts.fct_node_costs_daily "
            "where cluster_id = 'eks-prod' and pricing_basis = 'bill'",
        )
    }
    assert {"on_demand", "savings_plan", "spot"} <= options


def test_categories_add_up_to_the_cost_in_scope(fleet):
    _, db, _ = fleet
    [(worst, days)] = query(
        db,
        """select max(abs(ledger_cost - (billed_cost_in_scope + estimated_cost
                                         + rate_card_cost))), count(*)
           from marts.fct_cluster_costs_daily""",
    )
    # 4 clusters x 33 days, but for aks-web after its last node left on Oct 20 (the
    # decommissioned cluster): no evidence Oct 21 - Nov 2, no cluster-day (13 days)
    assert days == 4 * 33 - 13
    assert worst < 1e-6


def test_reconciliation_is_complete_for_billed_october(fleet):
    _, db, _ = fleet
    rows = query(
        db,
        """select cluster_id, min(reconciled_ratio), bool_and(is_complete), min(match_ratio)
           from marts.fct_reconciliation_daily
           where usage_date between ? and ? group by 1 order by 1""",
        [MONTH_START, MONTH_END],
    )
    for cluster, reconciled, complete, match_rate in rows:
        assert reconciled == pytest.approx(1.0, abs=1e-9), cluster
        assert complete, cluster
        if cluster != "onprem-dc1":
            assert match_rate == 1.0, cluster


def test_dbt_unit_tests_pass(fleet):
    """Every `unit_tests:` case of the project (hand-computed formulas), on a built warehouse."""
    _, db, _ = fleet
    result = run_dbt(["test", "--select", "test_type:unit"], db_path=db)
    # the run's results also hold its on-run-start hook (status success)
    units = [r for r in result.result.results if r.node.resource_type == "unit_test"]
    assert len(units) >= 40
    assert all(str(r.status) == "pass" for r in units)
    assert all(str(r.status) in ("pass", "success") for r in result.result.results)


def test_gpu_nodes_split_gpu_cpu_memory_and_pods_pay_their_gpu_seconds(fleet):
    """eks-prod's GPU pool on Oct 5 (billed, both GPU nodes up all day): each node's GPU part
    is node cost × the seed's share (g5.12xlarge 0.5891, p4d.24xlarge 0.7585), CPU and memory
    split the rest; each pod's GPU cost is, per hour and GPU, GPU part / 24 / GPUs × its
    uptime × its MIG fraction (profile slices / 7) / 3600, time-shared GPUs scaled to the hour
    — computed here from the GPU report files themselves."""
    root, db, _ = fleet
    day = dt.date(2026, 10, 5)
    nodes = {
        node: (cost, count, share, gpu_cost)
        for node, cost, count, share, gpu_cost in query(
            db,
            """select node, node_cost, gpu_count, gpu_share_ratio, gpu_cost
               from marts.fct_node_costs_daily
               where cluster_id = 'eks-prod' and usage_date = ? and gpu_count > 0""",
            [day],
        )
    }
    assert sorted((count, share) for _, count, share, _ in nodes.values()) == [
        (4, 0.5891),
        (8, 0.7585),
    ]
    for node, (cost, _, share, gpu_cost) in nodes.items():
        assert gpu_cost == pytest.approx(cost * share, abs=1e-9), node
        [(cpu, memory, gpu)] = query(
            db,
            """select sum(cpu_cost), sum(memory_cost), sum(gpu_cost)
               from intermediate.int_node_hours_priced where node = ? and usage_date = ?""",
            [node, day],
        )
        assert gpu == pytest.approx(cost * share, abs=1e-6), node
        assert cpu == pytest.approx(memory, abs=1e-6) and cpu + memory == pytest.approx(
            cost * (1 - share), abs=1e-6
        ), node
    report = pd.concat(
        pd.read_csv(path, dtype=str, keep_default_na=False)
        for path in (root / "landing/usage/eks-prod" / day.isoformat()).glob("*.4.csv")
    )
    report["fraction"] = [
        int(profile.split("g.")[0]) / 7 if profile else 1.0 for profile in report.mig_profile
    ]
    report["claim"] = report.gpu_pod_uptime.astype(float) * report.fraction / 3600
    per_gpu = report.groupby(["interval_start", "gpu_uuid"]).claim.transform("sum")
    report["scaled"] = report.claim / per_gpu.clip(lower=1.0)
    hourly = {node: gpu_cost / 24 / count for node, (_, count, _, gpu_cost) in nodes.items()}
    report["expected"] = report.node.map(hourly) * report.scaled
    expected = report.groupby("pod").expected.sum()
    got = dict(
        query(
            db,
            """select pod, sum(gpu_cost) from marts.fct_pod_costs_daily
               where cluster_id = 'eks-prod' and usage_date = ? and gpu_cost > 0 group by pod""",
            [day],
        )
    )
    assert set(got) == set(expected.index)
    for pod, cost in expected.items():
        assert got[pod] == pytest.approx(cost, abs=1e-6), pod
    # the two time-shared notebooks pods pay half a GPU each; an idle GPU is nobody's
    assert sum(got.values()) < sum(g for *_, g in nodes.values())
