"""The daily ledger through Dagster, in process, on a tiny generated fleet (2 clusters, 6 nodes,
2026-10-01 .. 2026-10-04, as of 2026-10-08): a day partition rebuilds that day only, every run
is logged, and a failing raw-data expectation blocks the ledger and shows in data health.

The tests run in file order on one warehouse; each leaves it as the next expects.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os

import duckdb
import pytest

from tests.test_dagster_support import (
    query,
    range_tags,
    started_steps,
    step_failures,
    tiny_fleet,
    usage_report,
)
from tests.test_dagster_support import warehouse as warehouse_resource

AS_OF = "2026-10-08"
POD_COLUMNS = (
    "cluster_id, usage_date, namespace, pod, node, team, cost_center, application, "
    "cpu_usage_core_hours, cpu_cost, memory_cost, used_cost, workload_idle_cost, total_cost"
)


def _run(fleet, *, partition_key: str | None = None, tags: dict | None = None):
    from kubeledger.dagster.definitions import defs

    return defs.resolve_job_def("ledger_daily").execute_in_process(
        partition_key=partition_key,
        tags=tags,
        resources={"warehouse": warehouse_resource(fleet, AS_OF)},
        raise_on_error=False,
    )


def _pod_rows(db, where: str = "true") -> list[tuple]:
    return query(
        db,
        f"select {POD_COLUMNS} from marts.fct_pod_costs_daily where {where} "
        "order by cluster_id, usage_date, namespace, pod",
    )


def _rewrite(path, sql_update: str) -> None:
    """Rewrite a CSV report in place through DuckDB (every column as text, same header)."""
    con = duckdb.connect()
    con.execute(f"create table report as select * from read_csv('{path}', all_varchar = true)")
    con.execute(sql_update)
    con.execute(f"copy report to '{path}' (header, delimiter ',')")
    con.close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    folder = tiny_fleet(tmp_path_factory.mktemp("ledger_fleet"))
    result = _run(folder, tags=range_tags("2026-10-01", "2026-10-04"))
    assert result.success, step_failures(result)
    return folder


@pytest.fixture(scope="module")
def db(fleet):
    return fleet / "kubeledger.duckdb"


def test_the_first_run_allocates_every_day_and_is_logged(db):
    assert query(db, "select distinct usage_date from marts.fct_pod_costs_daily order by 1") == [
        (dt.date(2026, 10, day),) for day in (1, 2, 3, 4)
    ]
    user = os.environ.get("USER") or getpass.getuser()
    assert query(
        db,
        "select first_day, last_day, day_count, reason, requested_by, as_of_date, status "
        "from ops.rerun_log",
    ) == [
        (
            dt.date(2026, 10, 1),
            dt.date(2026, 10, 4),
            4,
            "manual",
            user,
            dt.date(2026, 10, 8),
            "succeeded",
        )
    ]


def test_a_day_partition_rebuilds_that_day_and_leaves_the_others_alone(fleet, db):
    before_other = _pod_rows(db, "usage_date <> date '2026-10-02'")
    before_day = _pod_rows(db, "usage_date = date '2026-10-02'")
    # a re-delivered report for Oct 2: every user pod used 50% more CPU
    _rewrite(
        usage_report(fleet / "landing", "eks-prod", dt.date(2026, 10, 2)),
        "update report set pod_usage_cpu_core_seconds = "
        "cast(cast(pod_usage_cpu_core_seconds as double) * 1.5 as varchar) "
        "where namespace not in ('kube-system', 'monitoring')",
    )

    result = _run(fleet, partition_key="2026-10-02")

    assert result.success, step_failures(result)
    assert _pod_rows(db, "usage_date <> date '2026-10-02'") == before_other
    after_day = _pod_rows(db, "usage_date = date '2026-10-02'")
    assert len(after_day) == len(before_day)
    assert [row[:4] for row in after_day] == [row[:4] for row in before_day]
    for before, after in zip(before_day, after_day, strict=True):
        scaled = before[0] == "eks-prod" and before[2] not in ("kube-system", "monitoring")
        assert after[8] == pytest.approx(before[8] * (1.5 if scaled else 1.0))
    assert sum(a[9] != b[9] for b, a in zip(before_day, after_day, strict=True)) > 0
    assert query(
        db, "select first_day, last_day, reason, status from ops.rerun_log order by started_at"
    )[-1] == (dt.date(2026, 10, 2), dt.date(2026, 10, 2), "manual", "succeeded")


def test_each_run_publishes_the_serving_copy_readers_use(fleet, db):
    # the run of Oct 2 above changed that day's pod costs: the serving copy has them too
    serving = fleet / "kubeledger-serving.duckdb"
    assert query(serving, f"select {POD_COLUMNS} from marts.fct_pod_costs_daily order by all") == (
        query(db, f"select {POD_COLUMNS} from marts.fct_pod_costs_daily order by all")
    )
    assert (fleet / "parquet" / "marts" / "fct_pod_costs_daily.parquet").exists()


def test_a_failing_expectation_blocks_the_ledger_and_shows_in_data_health(fleet, db):
    from dagster import AssetKey, materialize

    from kubeledger.dagster.assets_dbt import ledger_models
    from kubeledger.dagster.resources import dbt_resource

    report = usage_report(fleet / "landing", "eks-prod", dt.date(2026, 10, 3))
    source_file = report.relative_to(fleet / "landing").as_posix()
    # one negative usage value (7th data row: loads, fails an expectation) and one value that
    # is no number (10th row: quarantined by the loader, never loaded)
    _rewrite(report, "update report set pod_usage_cpu_core_seconds = '-5' where rowid = 6")
    _rewrite(report, "update report set pod_usage_memory_byte_seconds = 'n/a' where rowid = 9")
    before = _pod_rows(db, "usage_date = date '2026-10-03'")
    runs_before = query(db, "select count(*) from ops.rerun_log")

    result = _run(fleet, partition_key="2026-10-03")

    assert not result.success
    checks = {
        evaluation.check_name: evaluation.passed
        for evaluation in result.get_asset_check_evaluations()
    }
    assert checks["expectations_koku_pod_usage"] is False
    assert all(passed for name, passed in checks.items() if name != "expectations_koku_pod_usage")
    assert started_steps(result) == {"landing", "landing_expectations"}  # no dbt
    assert _pod_rows(db, "usage_date = date '2026-10-03'") == before
    assert query(db, "select count(*) from ops.rerun_log") == runs_before
    assert query(
        db,
        "select raw_table, description, cluster_id, usage_date, unexpected_count, sample_rows "
        "from ops.expectation_results",
    ) == [
        (
            "koku_pod_usage",
            "pod_usage_cpu_core_seconds is not negative",
            "eks-prod",
            dt.date(2026, 10, 3),
            1,
            f"{source_file} row 7",
        )
    ]

    health = materialize(
        [ledger_models],
        selection=[AssetKey(["marts", "fct_data_health_daily"])],
        partition_key="2026-10-03",
        resources={"warehouse": warehouse_resource(fleet, AS_OF), "dbt": dbt_resource()},
        raise_on_error=False,
    )
    assert health.success, step_failures(health)
    rows = query(
        db,
        "select cluster_id, has_usage, has_billing, quarantined_rows, failed_expectations, "
        "failed_expectation_rows, failed_expectation_list, needs_attention, repair_window, "
        "days_ago from marts.fct_data_health_daily where usage_date = date '2026-10-03' "
        "order by 1",
    )
    # Oct 3 is not billed yet (the fleet's exports end on Oct 2): both need attention; only
    # eks-prod has a quarantined value and a failed expectation, each on its one bad row
    failed = "koku_pod_usage: pod_usage_cpu_core_seconds is not negative"
    assert rows == [
        ("eks-prod", True, False, 1, 1, 1, failed, True, "automatic", 5),
        ("gke-analytics", True, False, 0, 0, 0, None, True, "automatic", 5),
    ]
    assert query(db, "select _source_file, _row_number, column_name from raw.quarantine") == [
        (source_file, 10, "pod_usage_memory_byte_seconds")
    ]


def test_a_run_reallocates_the_days_whose_billing_was_restated(fleet, db):
    """SPEC §9: a run of one day first allocates again every day whose billing lines changed
    since it was allocated (here a restated AWS export: Oct 1's costs × 1.2)."""
    (export,) = (fleet / "landing" / "billing" / "aws").rglob("*.parquet")
    scope_sql = (
        "select sum(effective_cost) from intermediate.int_billing_lines_scoped "
        "where cluster_id = 'eks-prod' and charge_date = date '2026-10-01'"
    )
    ledger_sql = (
        "select sum(total_cost) from marts.fct_owner_costs_daily "
        "where cluster_id = 'eks-prod' and usage_date = date '2026-10-01'"
    )
    ((scope_before,),) = query(db, scope_sql)
    columns = (
        "line_item_unblended_cost",
        "line_item_net_unblended_cost",
        "savings_plan_savings_plan_effective_cost",
        "savings_plan_net_savings_plan_effective_cost",
        "reservation_effective_cost",
        "reservation_net_effective_cost",
    )
    scaled = ", ".join(
        f"case when left(line_item_usage_start_date, 10) = '2026-10-01' and {column} <> '' "
        f"then cast(cast({column} as decimal(38, 10)) * 1.2 as varchar) else {column} end "
        f"as {column}"
        for column in columns
    )
    with duckdb.connect() as con:
        con.execute(
            f"copy (select * replace ({scaled}) from '{export}') "
            f"to '{export.with_name('restated.parquet')}' (format parquet)"
        )
    export.unlink()

    result = _run(fleet, partition_key="2026-10-04")

    assert result.success, step_failures(result)
    ((scope_after,),) = query(db, scope_sql)
    ((ledger_after,),) = query(db, ledger_sql)
    assert float(scope_after) == pytest.approx(float(scope_before) * 1.2, rel=1e-9)
    assert float(ledger_after) == pytest.approx(float(scope_after), abs=1e-6)


def test_retention_prunes_billing_past_90_days_but_keeps_the_sealed_lines(fleet, db):
    from kubeledger.close.seal import ensure_sealed_schema
    from kubeledger.dagster.definitions import defs

    per_day = (
        "select cast(line_item_usage_start_date as date), count(*) from raw.aws_cur2 group by 1"
    )
    counts = dict(query(db, per_day))
    (sealed_id,) = query(
        db,
        "select billing_line_id from marts.fct_billing_lines where source_format = 'aws_cur2' "
        "and charge_date = date '2026-10-01' order by source_row_number limit 1",
    )[0]
    with duckdb.connect(str(db)) as con:
        # a sealed October that references the first of Oct 1's AWS lines
        ensure_sealed_schema(con)
        con.execute(
            "insert into sealed.sealed_bills (bill_month, bill_id, month_start_date, "
            "bill_status, target_cost, billed_cost, estimated_cost, slice_count, "
            "reconciled_slice_count, cluster_count, line_count, billing_line_count, "
            "as_of_date, sealed_at, ledger_version) values ('2026-10', 'b1', date '2026-10-01', "
            "'partial', 1, 1, 1, 1, 0, 1, 1, 1, date '2026-11-10', now(), 'test')"
        )
        con.execute(
            "insert into sealed.sealed_billing_line_refs (bill_id, bill_month, cluster_id, "
            "cost_family, billing_line_id) values ('b1', '2026-10', 'eks-prod', 'compute', ?)",
            [sealed_id],
        )

    # As of 2027-01-02 retention (90 days) reaches 2026-10-04 and the re-run window (92 days)
    # starts on 2026-10-02: Oct 1 is past both, Oct 2 is past retention but a re-run needs it
    result = defs.resolve_job_def("raw_billing_retention").execute_in_process(
        resources={"warehouse": warehouse_resource(fleet, "2027-01-02")}
    )

    assert result.success
    assert counts[dt.date(2026, 10, 1)] > 1
    assert dict(query(db, per_day)) == {
        dt.date(2026, 10, 1): 1,
        dt.date(2026, 10, 2): counts[dt.date(2026, 10, 2)],
    }
    # the row kept is the sealed line: staging, reading raw again, gives it the same ID
    assert query(
        db,
        "select billing_line_id from staging.stg_aws__cur2_billing_lines "
        "where charge_date = date '2026-10-01'",
    ) == [(sealed_id,)]
    assert query(
        db,
        "select count(*) from raw.gcp_billing_export "
        "where cast(usage_start_time as date) = date '2026-10-01'",
    ) == [(0,)]
