"""The `not_null_columns` data test (macros/tests/test_not_null_columns.sql): a model's
required columns checked in one query. Its body is rendered as dbt renders it (Jinja, with
the model and the columns) and run on DuckDB: a failing row per column holding nulls, with
the count of its null rows; none when there is no null, or no row."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import jinja2
import pytest

MACRO = Path(__file__).parents[1] / "macros" / "tests" / "test_not_null_columns.sql"


def _failing_rows(con: duckdb.DuckDBPyConnection, columns: list[str]) -> list[tuple]:
    text = MACRO.read_text()
    body = re.search(
        r"{%\s*test not_null_columns\(model, columns\)\s*%}(.*){%\s*endtest\s*%}", text, re.S
    )
    assert body, f"{MACRO} does not define not_null_columns(model, columns)"
    sql = jinja2.Template(body.group(1)).render(model="t", columns=columns)
    return sorted(con.execute(sql).fetchall())


@pytest.fixture
def con():
    with duckdb.connect() as con:
        con.execute("create table t (a varchar, b integer, c date, d double)")
        yield con


def test_one_failing_row_per_column_with_nulls_and_its_count(con):
    con.execute(
        "insert into t values ('x', 1, date '2026-10-01', 1.0), ('y', null, null, 2.0), "
        "(null, null, date '2026-10-02', 3.0), ('z', 4, date '2026-10-03', null)"
    )
    assert _failing_rows(con, ["a", "b", "c"]) == [("a", 1), ("b", 2), ("c", 1)]
    assert _failing_rows(con, ["b"]) == [("b", 2)]
    # a column outside the list is not checked
    assert _failing_rows(con, ["a", "c"]) == [("a", 1), ("c", 1)]


def test_no_failing_row_without_nulls_or_without_rows(con):
    assert _failing_rows(con, ["a", "b", "c", "d"]) == []
    con.execute("insert into t values ('x', 1, date '2026-10-01', 1.0)")
    assert _failing_rows(con, ["a", "b", "c", "d"]) == []
