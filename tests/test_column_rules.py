"""The `column_rules` data test (macros/tests/test_column_rules.sql): a model's rules on single
columns (not_null, non_negative, between, accepted_values) checked in one query. Its body is
rendered as dbt renders it (Jinja with the `do` extension, the model and the rules) and run on
DuckDB: a failing row per broken rule naming the column and the rule, with the count of rows
that break it; none when nothing is broken, or there is no row."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import duckdb
import jinja2
import pytest

MACRO = Path(__file__).parents[1] / "macros" / "tests" / "test_column_rules.sql"
SIGNATURE = (
    r"{%\s*test column_rules\(model, not_null=\[\], non_negative=\[\], between={}, "
    r"accepted_values={}\)\s*%}(.*){%\s*endtest\s*%}"
)


class CompilerError(Exception):
    pass


def _raise(message: str) -> None:
    raise CompilerError(message)


def _render(**rules) -> str:
    body = re.search(SIGNATURE, MACRO.read_text(), re.S)
    assert body, f"{MACRO} does not define column_rules with its four rules"
    template = jinja2.Environment(extensions=["jinja2.ext.do"]).from_string(body.group(1))
    arguments = {"not_null": [], "non_negative": [], "between": {}, "accepted_values": {}}
    arguments.update(rules)
    exceptions = SimpleNamespace(raise_compiler_error=_raise)
    # dbt's escape_single_quotes as DuckDB (dbt's default) has it
    dbt = SimpleNamespace(escape_single_quotes=lambda text: text.replace("'", "''"))
    return template.render(model="t", exceptions=exceptions, dbt=dbt, **arguments)


def _failing_rows(con: duckdb.DuckDBPyConnection, **rules) -> list[tuple]:
    return sorted(con.execute(_render(**rules)).fetchall())


@pytest.fixture
def con():
    with duckdb.connect() as con:
        con.execute("create table t (a varchar, b integer, c date, d double, e boolean, f double)")
        yield con


def test_not_null_fails_once_per_column_with_its_count_of_null_rows(con):
    con.execute(
        "insert into t (a, b, c, d) values ('x', 1, date '2026-10-01', 1.0), "
        "('y', null, null, 2.0), (null, null, date '2026-10-02', 3.0), "
        "('z', 4, date '2026-10-03', null)"
    )
    assert _failing_rows(con, not_null=["a", "b", "c"]) == [
        ("a", "not_null", 1),
        ("b", "not_null", 2),
        ("c", "not_null", 1),
    ]
    # a column outside the list is not checked
    assert _failing_rows(con, not_null=["a", "c"]) == [("a", "not_null", 1), ("c", "not_null", 1)]


def test_non_negative_allows_floating_point_noise_and_nulls(con):
    con.execute("insert into t (d, f) values (-0.0000000001, 0), (0, -0.01), (null, -2), (5, null)")
    assert _failing_rows(con, non_negative=["d", "f"]) == [("f", "non_negative", 2)]


def test_between_includes_both_bounds_and_lets_nulls_pass(con):
    con.execute("insert into t (d) values (0), (1), (0.5), (null), (1.0000001), (-0.5)")
    assert _failing_rows(con, between={"d": [0, 1]}) == [("d", "between", 2)]
    assert _failing_rows(con, between={"d": [-1, 2]}) == []


def test_accepted_values_quote_text_and_compare_booleans_as_booleans(con):
    con.execute(
        "insert into t (a, e, b) values ('it''s', false, 1), ('other', true, 2), "
        "(null, null, 3), ('x', false, 1)"
    )
    assert _failing_rows(con, accepted_values={"a": ["it's", "x"]}) == [("a", "accepted_values", 1)]
    assert _failing_rows(con, accepted_values={"e": [False]}) == [("e", "accepted_values", 1)]
    assert _failing_rows(con, accepted_values={"b": [1, 2]}) == [("b", "accepted_values", 1)]
    # a boolean is written as a literal, never as text (Spark refuses `boolean in ('False')`)
    sql = _render(accepted_values={"e": [False, True]})
    assert "e not in (false, true)" in sql
    assert "'False'" not in sql and "'false'" not in sql


def test_every_broken_rule_of_a_column_is_its_own_row(con):
    con.execute("insert into t (d) values (null), (-3), (7)")
    assert _failing_rows(con, not_null=["d"], non_negative=["d"], between={"d": [0, 5]}) == [
        ("d", "between", 2),
        ("d", "non_negative", 1),
        ("d", "not_null", 1),
    ]


def test_no_failing_row_when_nothing_is_broken_or_there_is_no_row(con):
    rules = {
        "not_null": ["a", "b"],
        "non_negative": ["d"],
        "between": {"b": [0, 10]},
        "accepted_values": {"a": ["x"], "e": [True]},
    }
    assert _failing_rows(con, **rules) == []
    con.execute("insert into t values ('x', 3, date '2026-10-01', 0, true, null)")
    assert _failing_rows(con, **rules) == []


def test_a_test_without_rules_is_refused():
    with pytest.raises(CompilerError, match="names no rule"):
        _render()
