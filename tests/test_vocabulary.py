"""One vocabulary across every mart (issue 16 item 1; the table in models/docs.md), checked
column by column from a built and closed warehouse's information_schema, so a new mart or a
new column that breaks it fails here without anyone listing it:

- a column ending in `_ratio` holds fractions from 0 to 1, rounded to six decimals;
- a column ending in `_pct` holds percentages from 0 to 100, rounded to two decimals;
- no column says `percent` (budget percentages are `_pct_of_budget`);
- a month column (`*_month`) is a `date`, the first day of its month;
- `is_unowned` is never true on a platform row: platform cost is shared cost, not unowned.

`violations` is also run on a scratch warehouse broken on purpose, so the check itself is
known to fail when a mart breaks the rule.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from tests.test_report import built_fleet, copy_of

MONTH = "2026-10"
AS_OF = dt.date(2026, 11, 19)
NUMERIC = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "INTEGER", "BIGINT", "HUGEINT", "SMALLINT")

pytestmark = pytest.mark.slow


def _columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    return con.execute(
        """select table_name, column_name, data_type from information_schema.columns
           where table_schema = 'marts' order by table_name, ordinal_position"""
    ).fetchall()


def _count(con: duckdb.DuckDBPyConnection, table: str, where: str) -> int:
    return con.execute(f'select count(*) from marts."{table}" where {where}').fetchone()[0]


def _range_problems(
    con: duckdb.DuckDBPyConnection, table: str, column: str, kind: str, top: int, digits: int
) -> list[str]:
    quoted = f'"{column}"'
    problems = []
    outside = _count(con, table, f"{quoted} < 0 or {quoted} > {top}")
    if outside:
        problems.append(f"{table}.{column}: {outside} rows outside 0-{top} (a {kind})")
    # exact: 0.9999999999999996 is not 1.0 rounded (round is idempotent on a rounded value)
    unrounded = _count(con, table, f"{quoted} <> round({quoted}, {digits})")
    if unrounded:
        problems.append(f"{table}.{column}: {unrounded} rows not rounded to {digits} decimals")
    return problems


def violations(con: duckdb.DuckDBPyConnection) -> tuple[list[str], dict[str, list[str]]]:
    """(every break of the vocabulary in schema `marts`, the columns checked per rule)."""
    problems: list[str] = []
    checked: dict[str, list[str]] = {"ratio": [], "pct": [], "month": [], "is_unowned": []}
    columns = _columns(con)
    by_table: dict[str, set[str]] = {}
    for table, column, data_type in columns:
        by_table.setdefault(table, set()).add(column)
        name = f"{table}.{column}"
        if "percent" in column:
            problems.append(f"{name}: says `percent`; percentages are `_pct` (or `_pct_of_budget`)")
        if column.endswith(("_ratio", "_pct")):
            kind = "ratio" if column.endswith("_ratio") else "pct"
            if not data_type.upper().startswith(NUMERIC):
                problems.append(f"{name}: a {kind} of type {data_type}")
                continue
            checked[kind].append(name)
            top, digits = (1, 6) if kind == "ratio" else (100, 2)
            problems += _range_problems(con, table, column, kind, top, digits)
        if column.endswith("_month"):
            checked["month"].append(name)
            if data_type.upper() != "DATE":
                problems.append(f"{name}: a month of type {data_type}, not DATE")
                continue
            not_first = _count(con, table, f'extract(day from "{column}") <> 1')
            if not_first:
                problems.append(f"{name}: {not_first} rows not on the first of the month")
    for table, names in sorted(by_table.items()):
        if {"is_unowned", "is_platform"} <= names:
            checked["is_unowned"].append(table)
            flagged = _count(con, table, "is_unowned and is_platform")
            if flagged:
                problems.append(f"{table}: {flagged} platform rows flagged is_unowned")
    return problems, checked


@pytest.fixture(scope="module")
def closed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report's generated fleet, built, with October closed and sealed."""
    from kubeledger.close.closer import close_month

    fleet = built_fleet(tmp_path_factory)
    db = copy_of(fleet, tmp_path_factory.mktemp("vocabulary"), "closed.duckdb")
    close_month(db, MONTH, AS_OF, progress=None)
    return db


def test_every_mart_speaks_one_vocabulary(closed_db):
    with duckdb.connect(str(closed_db), read_only=True) as con:
        problems, checked = violations(con)
        platform_rows = _count(con, "fct_pod_costs_daily", "is_platform")
        ownerless_platform = _count(
            con,
            "fct_pod_costs_daily",
            "is_platform and team = 'unallocated' and cost_center = 'unallocated'",
        )
        bill_months = con.execute(
            "select distinct bill_month from marts.fct_bill_lines_monthly"
        ).fetchall()
    assert problems == []
    # the rules had something to check: the columns people read, with rows in them
    for name in (
        "rpt_metrics_daily.idle_ratio",
        "rpt_metrics_cluster_daily.reconciled_ratio",
        "fct_reconciliation_daily.ownership_coverage_ratio",
        "fct_data_health_daily.match_ratio",
    ):
        assert name in checked["ratio"], name
    assert "rpt_metrics_bill_backing_monthly.bill_share_pct" in checked["pct"]
    for name in (
        "fct_bill_lines_monthly.bill_month",
        "fct_bill_close_status.bill_month",
        "rpt_owner_bill_explained.bill_month",
        "rpt_metrics_daily.usage_month",
        "dim_dates.date_month",
        "fct_cloud_charge_allocations.charge_month",
    ):
        assert name in checked["month"], name
    assert checked["is_unowned"] == ["fct_pod_costs_daily"]
    # the fleet has platform pods no owner rule names (kube-system and the like): exactly
    # the rows the old definition flagged unowned
    assert platform_rows > 0 and ownerless_platform > 0
    # October sealed, November's draft: each named by its first day
    assert sorted(bill_months) == [(dt.date(2026, 10, 1),), (dt.date(2026, 11, 1),)]


def test_the_check_fails_on_a_mart_that_breaks_the_vocabulary():
    """Each rule, broken once in a scratch `marts` schema, is reported."""
    with duckdb.connect() as con:
        con.execute("create schema marts")
        con.execute(
            """create table marts.fct_bad as select * from (values
                   (0.9999999999999996::double, 45.5::double, 0.5::double, 1.0::double,
                    '2026-10', date '2026-10-01', date '2026-10-02', true, true, 10.0::double),
                   (0.25::double, 101.0::double, 1.5::double, 0.123::double,
                    '2026-10', date '2026-10-01', date '2026-10-01', false, false, 10.0::double)
               ) as t(exact_ratio, share_pct, over_ratio, unrounded_pct, text_month, ok_month,
                      mid_month, is_unowned, is_platform, used_percent_of_budget)"""
        )
        con.execute(
            """create table marts.fct_good as select 0.5 as idle_ratio, 12.5 as bill_share_pct,
                      date '2026-10-01' as bill_month, true as is_unowned, false as is_platform"""
        )
        problems, checked = violations(con)
    assert problems == [
        "fct_bad.exact_ratio: 1 rows not rounded to 6 decimals",
        "fct_bad.share_pct: 1 rows outside 0-100 (a pct)",
        "fct_bad.over_ratio: 1 rows outside 0-1 (a ratio)",
        "fct_bad.unrounded_pct: 1 rows not rounded to 2 decimals",
        "fct_bad.text_month: a month of type VARCHAR, not DATE",
        "fct_bad.mid_month: 1 rows not on the first of the month",
        "fct_bad.used_percent_of_budget: says `percent`; percentages are `_pct` (or "
        "`_pct_of_budget`)",
        "fct_bad: 1 platform rows flagged is_unowned",
    ]
    assert "fct_good.idle_ratio" in checked["ratio"]
    assert checked["is_unowned"] == ["fct_bad", "fct_good"]
