"""The Great Expectations suites on the raw tables: each rule catches its bad row, by row."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

DAY = dt.date(2026, 10, 3)
GOOD_POD_ROW = {
    "report_period_start": "2026-10-01 00:00:00 +0000 UTC",
    "report_period_end": "2026-11-01 00:00:00 +0000 UTC",
    "interval_start": "2026-10-03 05:00:00 +0000 UTC",
    "interval_end": "2026-10-03 05:59:59 +0000 UTC",
    "node": "node-1",
    "namespace": "shop",
    "pod": "cart-1",
    "pod_usage_cpu_core_seconds": "1800",
    "pod_request_cpu_core_seconds": "3600",
    "pod_usage_memory_byte_seconds": "1000",
    "pod_request_memory_byte_seconds": "2000",
    "node_capacity_cpu_cores": "2",
    "node_capacity_cpu_core_seconds": "7200",
    "node_capacity_memory_bytes": "8589934592",
    "node_capacity_memory_byte_seconds": "30923764531200",
    "node_role": "worker",
    "resource_id": "i-1",
    "pod_labels": "label_app:cart",
    "_cluster_id": "c1",
    "_source_file": "usage/c1/2026-10-03/report.0.csv",
}


@pytest.fixture
def con():
    from kubeledger.load import ensure_raw_schema

    connection = duckdb.connect()
    ensure_raw_schema(connection)
    yield connection
    connection.close()


def _insert_pod_rows(con, rows: list[dict]) -> None:
    for number, row in enumerate(rows, start=1):
        values = {**GOOD_POD_ROW, **row, "_row_number": number}
        names = ", ".join(f'"{name}"' for name in values)
        marks = ", ".join("?" for _ in values)
        con.execute(
            f"insert into raw.koku_pod_usage ({names}) values ({marks})", list(values.values())
        )


def _insert_many_pod_rows(con, columns_sql: dict[str, str], count: int = 5000) -> None:
    """`count` good pod rows (row numbers 1..count), with the given columns as SQL over `range`
    (0..count-1)."""
    names = ", ".join(f'"{name}"' for name in GOOD_POD_ROW)
    values = ", ".join(columns_sql.get(name, f"'{value}'") for name, value in GOOD_POD_ROW.items())
    con.execute(
        f"insert into raw.koku_pod_usage ({names}, _row_number) "
        f"select {values}, range + 1 from range({count})"
    )


def _pod_failures(con) -> dict[str, list[int]]:
    from kubeledger.quality import validate_raw_tables

    (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
    return {f.description: sorted(r.row_number for r in f.rows) for f in validation.failures}


def test_good_rows_pass_every_pod_usage_expectation(con):
    from kubeledger.quality import validate_raw_tables

    _insert_pod_rows(con, [{}, {"pod": "cart-2", "node_role": "control-plane"}])
    (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
    assert validation.success
    assert (validation.rows_checked, validation.expectations_evaluated) == (2, 36)


@pytest.fixture(params=["rows", "values"])
def way(request, monkeypatch):
    """Run the rules on typed columns on the rows, or on their raw columns' distinct values,
    whatever the sample of the frame would choose."""
    from kubeledger.quality import validate

    monkeypatch.setattr(validate, "FEW_VALUES_SHARE", -1.0 if request.param == "rows" else 1.0)
    return request.param


@pytest.mark.parametrize(
    ("bad", "failure"),
    [
        ({"pod_usage_cpu_core_seconds": "-1"}, "pod_usage_cpu_core_seconds is not negative"),
        ({"node_capacity_memory_bytes": "-8"}, "node_capacity_memory_bytes is not negative"),
        # 7200 x 1.05 = 7560 core-seconds is the most a pod may use of a 2-core node-hour
        (
            {"pod_usage_cpu_core_seconds": "7561"},
            "pod_usage_cpu_core_seconds is at most node_capacity_cpu_core_seconds x 1.05",
        ),
        (
            {"node_role": "gpu-worker"},
            "node_role is one of worker, control-plane, "
            "control_plane, controlplane, master, infra, infrastructure",
        ),
        (
            {"report_period_start": "2026-10-04 00:00:00 +0000 UTC"},
            "interval_start is not before report_period_start",
        ),
        (
            {"report_period_end": "2026-10-03 05:00:00 +0000 UTC"},
            "report_period_end is after interval_start",
        ),
        ({"pod_request_cpu_core_seconds": "1,5"}, "pod_request_cpu_core_seconds reads as a number"),
        ({"pod": None}, "pod is filled"),
    ],
)
def test_each_rule_names_the_row_that_breaks_it(con, way, bad, failure):
    _insert_pod_rows(con, [{}, {"pod": "cart-2", **bad}, {"pod": "cart-3"}])
    assert _pod_failures(con) == {failure: [2]}


def test_only_the_days_checked_are_validated(con):
    _insert_pod_rows(
        con,
        [
            {},
            {
                "interval_start": "2026-10-04 05:00:00 +0000 UTC",
                "interval_end": "2026-10-04 05:59:59 +0000 UTC",
                "pod_usage_cpu_core_seconds": "-1",
            },
        ],
    )
    assert _pod_failures(con) == {}


def test_aws_line_item_types_and_billing_period(con):
    from kubeledger.quality import validate_raw_tables

    rows = [
        ("Usage", "2026-10-03T00:00:00Z"),
        ("SavingsPlanNegation", "2026-10-03T00:00:00Z"),
        ("FreeLunch", "2026-10-03T00:00:00Z"),  # not an AWS line item type
        ("Usage", "2026-11-01T00:00:00Z"),  # after the billing period
    ]
    for number, (line_type, start) in enumerate(rows, start=1):
        con.execute(
            "insert into raw.aws_cur2 (bill_payer_account_id, bill_billing_period_start_date, "
            "bill_billing_period_end_date, line_item_line_item_type, "
            "line_item_usage_start_date, line_item_usage_end_date, _source_file, _row_number) "
            "values ('111', '2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z', ?, ?, ?, "
            "'billing/aws/cur.csv', ?)",
            [line_type, start, start, number],
        )
    (validation,) = validate_raw_tables(con, DAY, dt.date(2026, 11, 1), tables=["aws_cur2"])
    failures = {f.description: [r.row_number for r in f.rows] for f in validation.failures}
    assert failures == {
        "line_item_line_item_type is one of " + ", ".join(_aws_types()): [3],
        "bill_billing_period_end_date is after line_item_usage_start_date": [4],
    }


def _aws_types() -> tuple[str, ...]:
    from kubeledger.quality.suites import AWS_LINE_ITEM_TYPES

    return AWS_LINE_ITEM_TYPES


def test_validating_says_nothing_on_the_console(con, recwarn, caplog):
    """No pandas regex notes nor GX's INFO logging: `make demo` printed 250 such lines."""
    import logging

    from kubeledger.quality import validate_raw_tables

    caplog.set_level(logging.INFO)
    _insert_pod_rows(con, [{}])
    (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
    assert validation.success
    assert [str(w.message) for w in recwarn if "regular expression" in str(w.message)] == []
    assert [r.getMessage() for r in caplog.records if r.name.startswith("great_expectations")] == []


def test_a_frame_validated_in_chunks_fails_as_one(con, monkeypatch):
    """5,000 rows validated 2,048 at a time: the failures of every chunk, merged, are the
    failures of the whole frame (the suites' row-level rules look at one row)."""
    from kubeledger.quality import validate, validate_raw_tables

    _insert_many_pod_rows(
        con,
        {"pod_usage_cpu_core_seconds": "case when range in (9, 4499) then '-1' else '1800' end"},
    )

    def failures():
        (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
        assert validation.rows_checked == 5000
        return {
            (f.description, f.unexpected_count, tuple(sorted(r.row_number for r in f.rows)))
            for f in validation.failures
        }

    whole = failures()
    monkeypatch.setattr(validate, "CHUNK_ROWS", 2048)
    assert failures() == whole == {("pod_usage_cpu_core_seconds is not negative", 2, (10, 4500))}


def test_a_value_repeated_on_many_rows_fails_on_each_of_them(con, monkeypatch):
    """A rule on one text column runs once per distinct value; a failing value still fails on
    every row that holds it, each named with its value, counted by rows, in the file's order
    (nulls too), whichever chunks the rows fall in."""
    from kubeledger.quality import validate, validate_raw_tables

    _insert_many_pod_rows(
        con,
        {
            "pod_request_cpu_core_seconds": "case when range in (9, 19, 4499) then 'lots' "
            "else '3600' end",
            "pod": "case when range in (6, 7) then null else 'cart-1' end",
        },
    )

    def failures():
        (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
        return {
            f.description: (f.unexpected_count, [(r.row_number, r.value) for r in f.rows])
            for f in validation.failures
        }

    whole = failures()
    monkeypatch.setattr(validate, "CHUNK_ROWS", 2048)
    lots = "pod_request_cpu_core_seconds=lots"
    assert (
        failures()
        == whole
        == {
            "pod is filled": (2, [(7, "pod=nan"), (8, "pod=nan")]),
            "pod_request_cpu_core_seconds reads as a number": (
                3,
                [(10, lots), (20, lots), (4500, lots)],
            ),
        }
    )


def test_rules_on_typed_columns_fail_the_same_rows_on_rows_and_on_distinct_values(
    con, way, monkeypatch
):
    """A rule on typed columns runs on the rows, or once per distinct tuple of the raw columns
    it reads (requests, capacities and hours hold a few values in millions of rows): the same
    rows fail either way, each with its values and its UTC day (a CEST hour of 5 October is
    the 4th), in the rows' order, counted by rows, whichever chunks the rows or the values
    fall in (five values a chunk of two cannot hold)."""
    from kubeledger.quality import validate, validate_raw_tables

    _insert_many_pod_rows(
        con,
        {
            "pod_request_cpu_core_seconds": "case when range in (9, 4499) then '-3600' "
            "when range = 19 then '-1' when range = 49 then '-2' when range = 59 then '-3' "
            "else '3600' end",
            "interval_start": "case when range = 4499 then '2026-10-05 01:00:00 +0200 CEST' "
            "else '2026-10-03 05:00:00 +0000 UTC' end",
            "interval_end": "case when range = 29 then '2026-10-03 04:59:59 +0000 UTC' "
            "when range = 4499 then '2026-10-05 01:59:59 +0200 CEST' "
            "else '2026-10-03 05:59:59 +0000 UTC' end",
            "pod_usage_cpu_core_seconds": "case when range = 39 then '-5' "
            "else cast(range % 30 as varchar) end",
        },
    )

    def failures():
        (validation,) = validate_raw_tables(con, tables=["koku_pod_usage"])
        assert validation.rows_checked == 5000
        return {
            f.description: (f.unexpected_count, [(r.row_number, r.value, r.day) for r in f.rows])
            for f in validation.failures
        }

    whole = failures()
    monkeypatch.setattr(validate, "CHUNK_ROWS", 2048)
    monkeypatch.setattr(validate, "VALUE_CHUNK_ROWS", 2)
    request = "pod_request_cpu_core_seconds__value"
    assert (
        failures()
        == whole
        == {
            "pod_request_cpu_core_seconds is not negative": (
                5,
                [
                    (10, f"{request}=-3600.0", DAY),
                    (20, f"{request}=-1.0", DAY),
                    (50, f"{request}=-2.0", DAY),
                    (60, f"{request}=-3.0", DAY),
                    (4500, f"{request}=-3600.0", dt.date(2026, 10, 4)),
                ],
            ),
            "interval_end is not before interval_start": (
                1,
                [
                    (
                        30,
                        "interval_end__at=2026-10-03 04:59:59, "
                        "interval_start__at=2026-10-03 05:00:00",
                        DAY,
                    )
                ],
            ),
            "pod_usage_cpu_core_seconds is not negative": (
                1,
                [(40, "pod_usage_cpu_core_seconds__value=-5.0", DAY)],
            ),
        }
    )


def test_rules_run_on_distinct_values_where_the_sample_holds_few(con):
    """Requests and hours that repeat go to distinct values; usage that differs on every row
    stays on the rows."""
    from kubeledger.quality.suites import SUITES_BY_TABLE
    from kubeledger.quality.validate import _Groups, _table_columns, frame_sql

    _insert_many_pod_rows(con, {"pod_usage_cpu_core_seconds": "cast(range as varchar)"})
    suite = SUITES_BY_TABLE["koku_pod_usage"]
    sql = frame_sql(suite, _table_columns(con, suite), DAY, DAY)
    relation = con.sql(sql)
    groups = _Groups.of(suite, relation)
    groups.move_few_valued(con, suite, sql, relation.columns)
    assert ("pod_request_cpu_core_seconds__value",) in groups.values
    assert ("interval_end__at", "interval_start__at") in groups.values
    assert ("pod_usage_cpu_core_seconds__value",) in groups.rows
    assert (
        "node_capacity_cpu_core_seconds__tolerated",
        "pod_usage_cpu_core_seconds__value",
    ) in groups.rows


def test_failures_come_in_the_suites_order_however_each_rule_was_checked(con, way):
    """Rules on one text column run once per table on its distinct values, the others on the
    rows chunk by chunk; the failures still come in the order the suite lists its rules."""
    from kubeledger.quality import SUITES, validate_raw_tables

    _insert_pod_rows(
        con,
        [
            {"pod_usage_cpu_core_seconds": "-1"},  # a rule on a typed column: rows
            {"interval_end": None},  # a rule on a text column: distinct values
            {"node_role": "boss"},  # a rule on a derived text column: distinct values
            {},
        ],
    )
    (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
    found = [failure.description for failure in validation.failures]
    (suite,) = [suite for suite in SUITES if suite.table.name == "koku_pod_usage"]
    listed = [spec.description for spec in suite.expectations]
    assert sorted(found) == sorted(
        [
            "interval_end is filled",
            "pod_usage_cpu_core_seconds is not negative",
            next(description for description in listed if "node_role" in description),
        ]
    )
    assert found == sorted(found, key=listed.index)


def test_a_table_without_a_required_column_fails_its_table_check(con):
    """Each expectation runs on a frame of its own columns; the table-level check (required
    columns) still sees every column of the table, and a rule on a missing column fails."""
    from kubeledger.quality import validate_raw_tables

    _insert_pod_rows(con, [{}, {"pod": "cart-2"}])
    con.execute("alter table raw.koku_pod_usage drop column node")
    (validation,) = validate_raw_tables(con, DAY, DAY, tables=["koku_pod_usage"])
    failed = {failure.description: failure for failure in validation.failures}
    assert len(failed) == 2 and "node is filled" in failed
    required = next(failure for failure in validation.failures if failure.column is None)
    assert required.description.startswith("koku_pod_usage has its required columns: ")
    assert "node" in required.observed and required.rows == []
    assert failed["node is filled"].rows == [] and failed["node is filled"].observed


def test_a_failing_billing_row_has_no_cluster(con):
    """Billing rows carry no cluster: the failure says none (not NaN from the frame)."""
    from kubeledger.quality import validate_raw_tables

    con.execute(
        "insert into raw.gcp_billing_export (billing_account_id, cost, currency, usage_start_time,"
        " usage_end_time, invoice_month, _source_file, _row_number) values "
        "('A-1', 'x1', 'USD', '2026-10-03 00:00:00 UTC', '2026-10-03 01:00:00 UTC', '202610',"
        " 'billing/gcp/2026-10/export.jsonl', 1)"
    )
    (validation,) = validate_raw_tables(con, DAY, DAY, tables=["gcp_billing_export"])
    (row,) = next(f.rows for f in validation.failures if f.description == "cost reads as a number")
    assert (row.source_file, row.row_number, row.cluster_id) == (
        "billing/gcp/2026-10/export.jsonl",
        1,
        None,
    )
