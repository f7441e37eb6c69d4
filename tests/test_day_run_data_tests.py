"""A day's run checks the days it rebuilt, and only where that cannot miss a failure (SPEC §15).

A small generated fleet is loaded and built whole. Then one day is built again
(`kubeledger build --start`), and:
- every model configured by day records the days it rebuilt, and no other model does;
- a row-level test, or a uniqueness test whose key holds the day, of such a model reads the
  rebuilt day only; a uniqueness test whose key has no day, or a test of a model rebuilt by
  month, still reads the whole table;
- the rows of the other days are the rows the whole build wrote, and the rebuilt day's rows are
  the rows the whole build wrote for it (a claim is missing from two days' storage reports, so
  that those days have unattributed storage, a cost pool built by day), though the fleet's
  usage reports write their hours in local time, row by row in CEST and EDT
  (`2026-10-04 01:00:00 +0200 CEST` is 23:00 UTC the day before, `2026-10-03 22:00:00 -0400
  EDT` 02:00 UTC the day after): a day's run prunes raw rows by the date their text starts
  with (`_source_day`), a day off for some hours;
- a duplicate planted on another day is still found by every test that can find it: by the
  whole-table tests in the day's run, and by any test run without a build (`dbt test`).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from kubeledger.cli import main
from kubeledger.generate import generate_fleet
from kubeledger.paths import PROJECT_DIR
from kubeledger.warehouse import DbtError, run_dbt

DAY = "2026-10-04"
OTHER_DAY = "2026-10-02"


def _invoke(env: dict[str, str], *args: str):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def _models_configured_by_day() -> set[str]:
    """The models whose SQL calls incremental_by_day, read from the project's files."""
    return {
        path.stem
        for path in (PROJECT_DIR / "models").rglob("*.sql")
        if "incremental_by_day(" in path.read_text()
    }


def _tests_by_model(run_results: Path) -> dict[str, dict[str, str]]:
    """{test id: {'status': …, 'sql': compiled SQL}} of a dbt run."""
    results = json.loads(run_results.read_text())["results"]
    return {
        result["unique_id"]: {"status": result["status"], "sql": result.get("compiled_code") or ""}
        for result in results
        if result["unique_id"].startswith("test.")
    }


def _one(tests: dict[str, dict[str, str]], prefix: str) -> dict[str, str]:
    (found,) = [test for test_id, test in tests.items() if test_id.startswith(prefix)]
    return found


def _reads_only(sql: str, day: str) -> bool:
    return f"cast('{day}' as date)" in sql


def _all_days(con: duckdb.DuckDBPyConnection, model: str) -> list[tuple]:
    (schema,) = con.execute(
        "select table_schema from information_schema.tables where table_name = ?", [model]
    ).fetchone()
    return con.execute(f"select * from {schema}.{model} order by all").fetchall()


def _assert_same_rows(rows: list[tuple], expected: list[tuple], model: str) -> None:
    """Equal rows: doubles within 1e-9 (a sum's last bits follow the order DuckDB adds in),
    every other value (keys, dates, decimal money) exactly."""
    assert len(rows) == len(expected), model
    for row, want in zip(rows, expected, strict=True):
        assert len(row) == len(want), model
        for value, wanted in zip(row, want, strict=True):
            if isinstance(wanted, float) and isinstance(value, float):
                assert value == pytest.approx(wanted, rel=1e-9, abs=1e-12), (model, row, want)
            else:
                assert value == wanted, (model, row, want)


ZONES = (
    (dt.timezone(dt.timedelta(hours=2)), "+0200 CEST"),
    (dt.timezone(dt.timedelta(hours=-4)), "-0400 EDT"),
)


def _in_zone(text: str, zone: int) -> str:
    """`2026-10-03 23:00:00 +0000 UTC` as the operator writes it on a host in ZONES[zone]."""
    offset, suffix = ZONES[zone]
    instant = dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S +0000 UTC").replace(tzinfo=dt.UTC)
    return f"{instant.astimezone(offset):%Y-%m-%d %H:%M:%S} {suffix}"


def _write_hours_in_local_time(landing: Path) -> tuple[int, int]:
    """Rewrite every usage report's `interval_start`/`interval_end` in local time, CEST and
    EDT row by row; return how many hours now start on the next day's date, and how many on
    the day before's."""
    next_day = day_before = 0
    for path in sorted((landing / "usage").rglob("*.csv")):
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
        header = rows[0]
        columns = [header.index(name) for name in ("interval_start", "interval_end")]
        for number, row in enumerate(rows[1:]):
            before = row[columns[0]][:10]
            for column in columns:
                row[column] = _in_zone(row[column], number % 2)
            next_day += row[columns[0]][:10] > before
            day_before += row[columns[0]][:10] < before
        with path.open("w", newline="") as handle:
            csv.writer(handle, lineterminator="\n").writerows(rows)
    return next_day, day_before


def _drop_a_claim(landing: Path, days: tuple[str, ...]) -> int:
    """Remove one claim's rows from the storage reports of `days`: its volume is billed on
    those days with no claim using it, unattributed storage (a cost pool, SPEC §7). Returns
    the rows removed."""
    removed = 0
    for day in days:
        for path in sorted((landing / "usage").glob(f"*/{day}/*.csv")):
            with path.open(newline="") as handle:
                rows = list(csv.reader(handle))
            if "persistentvolumeclaim" not in rows[0]:
                continue
            claim = rows[0].index("persistentvolumeclaim")
            dropped = min(row[claim] for row in rows[1:])
            kept = [rows[0], *(row for row in rows[1:] if row[claim] != dropped)]
            removed += len(rows) - len(kept)
            with path.open("w", newline="") as handle:
                csv.writer(handle, lineterminator="\n").writerows(kept)
    return removed


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    out = tmp_path_factory.mktemp("day_run_fleet")
    generate_fleet(out, clusters=1, nodes=3, days=6, pods_per_node=4, progress=None)
    assert _drop_a_claim(out / "landing", (DAY, OTHER_DAY)) > 0
    next_day, day_before = _write_hours_in_local_time(out / "landing")
    assert next_day > 0 and day_before > 0
    env = {
        "KUBELEDGER_DB": str(out / "kubeledger.duckdb"),
        "KUBELEDGER_CONFIG": str(out / "kubeledger.yml"),
        "KUBELEDGER_SERVING_DB": str(out / "serving.duckdb"),
        "DBT_TARGET_PATH": str(out / "target"),
    }
    for args in (("load", str(out / "landing")), ("build",)):
        result = _invoke(env, *args)
        assert result.exit_code == 0, result.output
    db = Path(env["KUBELEDGER_DB"])
    with duckdb.connect(str(db), read_only=True) as con:
        before = {model: _all_days(con, model) for model in _models_configured_by_day()}
    built = _invoke(env, "build", "--start", DAY)
    assert built.exit_code == 0, built.output
    return out, env, db, before


def test_the_models_configured_by_day_record_the_day_they_rebuilt(fleet):
    _, _, db, _ = fleet
    by_day = _models_configured_by_day()
    assert "int_pod_hours_allocated" in by_day and "int_bill_lines_allocated" not in by_day
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "select relation, date_column, rows_filter from ops.dbt_rebuilt_days"
        ).fetchall()
    recorded = {re.sub(r'.*\."', "", relation).rstrip('"') for relation, _, _ in rows}
    assert recorded == by_day
    assert len(rows) == len(by_day)
    for _, date_column, rows_filter in rows:
        assert date_column == "usage_date"
        assert _reads_only(rows_filter, DAY), rows_filter


def test_tests_that_can_only_fail_on_a_rebuilt_row_read_the_rebuilt_day(fleet):
    out, _, _, _ = fleet
    tests = _tests_by_model(out / "target" / "run_results.json")
    assert all(test["status"] == "pass" for test in tests.values())
    scoped = [
        "test.kubeledger.unique_combination_int_pod_hours_allocated_",
        "test.kubeledger.day_of_int_pod_hours_allocated_",
        "test.kubeledger.column_rules_int_pod_hours_allocated.",
        "test.kubeledger.unique_combination_int_pod_labels_daily_",
        "test.kubeledger.column_rules_int_pod_labels_daily.",
        "test.kubeledger.unique_combination_fct_pod_costs_daily_",
    ]
    for prefix in scoped:
        assert _reads_only(_one(tests, prefix)["sql"], DAY), prefix
    whole = [
        # the key has no day: a duplicate could pair a rebuilt hour with an old one
        "test.kubeledger.unique_combination_int_node_hours_cluster_id__node__interval_start",
        # rebuilt by month (incremental_by_period), not by day
        "test.kubeledger.unique_int_bill_lines_allocated_bill_line_id",
    ]
    for prefix in whole:
        sql = _one(tests, prefix)["sql"]
        assert DAY not in sql, prefix


def test_a_days_run_writes_every_day_as_the_whole_build_wrote_it(fleet):
    _, _, db, before = fleet
    with duckdb.connect(str(db), read_only=True) as con:
        for model, rows in before.items():
            _assert_same_rows(_all_days(con, model), rows, model)
        # the hours the pruning keeps by their text's date only thanks to its day of margin
        after, before = con.execute(
            "select count(*) filter (where source_day = usage_date + 1), "
            "count(*) filter (where source_day = usage_date - 1) "
            f"from staging.stg_koku__pod_usage where usage_date = date '{DAY}'"
        ).fetchone()
        assert after > 0 and before > 0
        assert con.execute(
            "select count(*) filter (where source_day is null), "
            "count(*) filter (where abs(source_day - usage_date) > 1) "
            "from staging.stg_koku__pod_usage"
        ).fetchone() == (0, 0)
        assert (
            con.execute(
                f"select count(*) from intermediate.int_pod_hours_allocated "
                f"where usage_date = date '{DAY}'"
            ).fetchone()[0]
            > 0
        )
        # the day's run rebuilt a pool of each kind the fleet has, the claimless volume's too
        assert con.execute(
            "select list(distinct usage_date order by usage_date) "
            "from intermediate.int_cost_pools_daily where pool = 'unattributed_storage'"
        ).fetchone() == ([dt.date.fromisoformat(OTHER_DAY), dt.date.fromisoformat(DAY)],)
        assert (
            con.execute(
                "select count(*) from intermediate.int_cost_pools_daily "
                f"where pool = 'platform' and node is null and usage_date = date '{DAY}'"
            ).fetchone()[0]
            > 0
        )


def test_a_duplicate_on_another_day_is_found_by_every_test_that_can_find_it(fleet, monkeypatch):
    out, env, db, _ = fleet
    monkeypatch.setenv("DBT_TARGET_PATH", env["DBT_TARGET_PATH"])
    with duckdb.connect(str(db)) as con:
        for model in ("int_pod_labels_daily", "int_node_hours"):
            con.execute(
                f"insert into intermediate.{model} select * from intermediate.{model} "
                f"where usage_date = date '{OTHER_DAY}' limit 1"
            )
    # the day's run: the pod-label key holds the day, so its test reads the rebuilt day and
    # passes; the node-hour key has no day, so its test reads the whole table and fails
    built = _invoke(env, "build", "--start", DAY)
    assert built.exit_code != 0
    tests = _tests_by_model(out / "target" / "run_results.json")
    assert _one(tests, "test.kubeledger.unique_combination_int_pod_labels_daily_")["status"] == (
        "pass"
    )
    node_hours = (
        "test.kubeledger.unique_combination_int_node_hours_cluster_id__node__interval_start"
    )
    assert _one(tests, node_hours)["status"] == "fail"

    # a run that builds nothing checks the whole table, whatever its vars
    with pytest.raises(DbtError):
        run_dbt(
            ["test", "--select", "int_pod_labels_daily"],
            db_path=db,
            dbt_vars={"start_date": DAY, "end_date": DAY},
        )
    tests = _tests_by_model(out / "target" / "run_results.json")
    assert _one(tests, "test.kubeledger.unique_combination_int_pod_labels_daily_")["status"] == (
        "fail"
    )


def test_a_model_rebuilt_whole_in_a_days_run_is_checked_whole(fleet):
    out, env, db, _ = fleet
    # --full-refresh with --start: every model is rebuilt whole (and the planted duplicates of
    # the test before are gone with the old rows); none records a day, every test reads all
    built = _invoke(env, "build", "--start", DAY, "--full-refresh")
    assert built.exit_code == 0, built.output
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from ops.dbt_rebuilt_days").fetchone() == (0,)
    tests = _tests_by_model(out / "target" / "run_results.json")
    for prefix in (
        "test.kubeledger.unique_combination_int_pod_hours_allocated_",
        "test.kubeledger.unique_combination_int_pod_labels_daily_",
    ):
        assert DAY not in _one(tests, prefix)["sql"], prefix
