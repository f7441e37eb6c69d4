"""`make demo`'s steps through the CLI on a tiny fleet, as a person and a BI tool meet them.

One flow (module fixture): `kubeledger generate` (2 clusters, 6 nodes, 34 days from 2026-10-01,
tidy), `load` of every day but the last, `build` (publishes the serving copy), then, with a BI
reader holding the serving copy open through SQLAlchemy + duckdb-engine, `load` of the last
day, `build --start 2026-11-03` and `close --month 2026-10`; all with a project-style
DAGSTER_HOME; and `report --month 2026-10`. Then:
- the reader kept the snapshot it opened on all through, while a new connection (another
  process) sees the new day and the sealed bill;
- the Dagster instance shows 34 daily partitions materialized (33 from the first build, the
  34th from the second), their checks passed and the October close partition sealed;
- the console output is short, plain text (no ANSI codes off a terminal) and holds one line per
  dbt command, not dbt's log.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from tests.test_cli_events import CHECK
from tests.test_dagster_support import FLEET_START

REPO = Path(__file__).resolve().parents[1]
DAYS = 34  # usage 2026-10-01 .. 2026-11-03; billed through 2026-11-01 (days - 3)
LAST_DAY = FLEET_START + dt.timedelta(days=DAYS - 1)
SNAPSHOT = (
    "select count(*), count(distinct usage_date), max(usage_date) "
    "from marts.fct_cluster_costs_daily"
)
SEALED = "select count(*) from sealed.sealed_bills where bill_month = '2026-10'"


def _invoke(args: list[str], env: dict[str, str]) -> str:
    from kubeledger.cli import main

    result = CliRunner().invoke(main, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


class Reader(threading.Thread):
    """A BI tool's session: one SQLAlchemy connection held open, queried every 0.2 s."""

    def __init__(self, serving: Path) -> None:
        super().__init__(daemon=True)
        self.serving = serving
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.seen: set[tuple] = set()
        self.queries = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            engine = sa.create_engine(f"duckdb:///{self.serving}", connect_args={"read_only": True})
            with engine.connect() as connection:
                while True:
                    snapshot = tuple(connection.execute(sa.text(SNAPSHOT)).one()) + (
                        connection.execute(sa.text(SEALED)).scalar(),
                    )
                    self.seen.add(snapshot)
                    self.queries += 1
                    self.ready.set()
                    if self.stop.wait(0.2):
                        break
            engine.dispose()
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.ready.set()


def _new_connection(serving: Path) -> tuple:
    """What a new session sees: another process, as a BI tool's next connection."""
    code = (
        "import sqlalchemy as sa, sys\n"
        "engine = sa.create_engine(f'duckdb:///{sys.argv[1]}', connect_args={'read_only': True})\n"
        "with engine.connect() as c:\n"
        "    snapshot = c.execute(sa.text(sys.argv[2])).one()\n"
        "    print(*snapshot, c.execute(sa.text(sys.argv[3])).scalar())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(serving), SNAPSHOT, SEALED],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return (int(out[0]), int(out[1]), dt.date.fromisoformat(out[2]), int(out[3]))


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli_flow")
    home = out / ".dagster_home"
    home.mkdir()
    shutil.copy(REPO / "orchestration" / "kubeledger" / "dagster" / "dagster.yaml", home)
    env = {
        "KUBELEDGER_DB": str(out / "kubeledger.duckdb"),
        "KUBELEDGER_CONFIG": str(out / "kubeledger.yml"),
        "DAGSTER_HOME": str(home),
        "KUBELEDGER_VERBOSE": "",
    }
    saved = {name: os.environ.get(name) for name in env}
    outputs: dict[str, str] = {}
    try:
        outputs["generate"] = _invoke(
            [
                "generate",
                "--out",
                str(out),
                "--clusters",
                "2",
                "--nodes",
                "6",
                "--days",
                str(DAYS),
                "--pods-per-node",
                "4",
                "--tidy",
            ],
            env,
        )
        # the last day arrives later, as the next daily delivery would
        later = out / "later"
        for day_dir in (out / "landing" / "usage").glob(f"*/{LAST_DAY.isoformat()}"):
            target = later / "usage" / day_dir.parent.name / day_dir.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(day_dir, target)
        outputs["load"] = _invoke(["load", str(out / "landing")], env)
        outputs["build"] = _invoke(["build"], env)
        serving = out / "kubeledger-serving.duckdb"
        before = _new_connection(serving)
        inode = serving.stat().st_ino
        reader = Reader(serving)
        reader.start()
        assert reader.ready.wait(60), "the reader never connected"
        outputs["load_later"] = _invoke(["load", str(later)], env)
        outputs["build_day"] = _invoke(["build", "--start", LAST_DAY.isoformat()], env)
        outputs["close"] = _invoke(["close", "--month", "2026-10", "--as-of", "2026-11-20"], env)
        time.sleep(0.5)  # one more read after the last publish
        reader.stop.set()
        reader.join(60)
        # (after the reader: in one process DuckDB refuses a second configuration of a file)
        report = ["report", "--month", "2026-10", "--out", str(out / "report-2026-10.html")]
        outputs["report"] = _invoke(report, env)
        yield {
            "out": out,
            "home": home,
            "serving": serving,
            "outputs": outputs,
            "before": before,
            "after": _new_connection(serving),
            "inode_changed": serving.stat().st_ino != inode,
            "reader": reader,
        }
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def test_a_bi_reader_keeps_its_snapshot_while_builds_and_a_close_publish(flow):
    reader = flow["reader"]
    assert reader.error is None, reader.error
    assert reader.queries >= 3
    # 2 clusters x 33 days before the last day arrived; nothing sealed yet
    assert flow["before"] == (66, 33, LAST_DAY - dt.timedelta(days=1), 0)
    assert reader.seen == {flow["before"]}  # one snapshot all through, never a half-built one
    assert flow["inode_changed"]
    assert flow["after"] == (68, 34, LAST_DAY, 1)  # a new connection: the new day, the seal


def test_the_serving_copy_holds_every_mart_and_the_sealed_bills(flow):
    import duckdb

    with duckdb.connect(str(flow["out"] / "kubeledger.duckdb"), read_only=True) as con:
        expected = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables "
            "where table_schema in ('marts', 'sealed') order by 1"
        ).fetchall()
        bill_lines = con.execute(
            "select count(*), sum(billed_cost) from sealed.sealed_bill_lines"
        ).fetchone()
    with duckdb.connect(str(flow["serving"]), read_only=True) as con:
        served = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables order by 1"
        ).fetchall()
        assert (
            con.execute(
                "select count(*), sum(billed_cost) from sealed.sealed_bill_lines"
            ).fetchone()
            == bill_lines
        )
    assert served == expected
    assert {"marts.fct_owner_costs_daily", "marts.fct_data_health_daily"} <= {
        name for (name,) in served
    }
    parquet = flow["out"] / "parquet" / "sealed" / "sealed_bill_lines.parquet"
    with duckdb.connect() as con:
        assert (
            con.execute(f"select count(*), sum(billed_cost) from '{parquet}'").fetchone()
            == bill_lines
        )


def test_the_report_presents_the_sealed_month_from_the_serving_copy(flow):
    # the copy keeps the sealed tables' constraints and links the seal copies: it verifies
    text = flow["outputs"]["report"]
    assert f"==> report for 2026-10 from {flow['serving']}" in text
    assert "(SEALED, status full)" in text


def test_the_dagster_instance_shows_the_days_materialized_checks_passed_and_october_sealed(flow):
    from dagster import AssetCheckKey, AssetKey, DagsterInstance
    from dagster._core.storage.asset_check_execution_record import (
        AssetCheckExecutionRecordStatus,
    )

    instance = DagsterInstance.from_config(str(flow["home"]))
    days = {(FLEET_START + dt.timedelta(days=n)).isoformat() for n in range(DAYS)}
    for key in (
        ["landing"],
        ["staging", "stg_koku__pod_usage"],
        ["marts", "fct_pod_costs_daily"],
        ["marts", "fct_data_health_daily"],
        ["seeds", "platform_namespaces"],
    ):
        assert instance.get_materialized_partitions(AssetKey(key)) == days, key
    close = instance.get_latest_materialization_event(AssetKey("monthly_close"))
    assert close.asset_materialization.partition == "2026-10-01"
    assert close.asset_materialization.metadata["outcome"].value == "sealed_full"
    checks = [
        AssetCheckKey(AssetKey("landing"), "expectations_koku_pod_usage"),
        AssetCheckKey(AssetKey(["marts", "fct_pod_costs_daily"]), CHECK),
    ]
    records = instance.event_log_storage.get_latest_asset_check_execution_by_key(checks)
    assert {key: record.status for key, record in records.items()} == {
        key: AssetCheckExecutionRecordStatus.SUCCEEDED for key in checks
    }
    # the landing checks are per day: the last day's came from the second build
    assert records[checks[0]].partition == LAST_DAY.isoformat()


def test_the_console_is_short_plain_text_with_one_line_per_dbt_command(flow):
    text = "".join(flow["outputs"].values())
    assert "\x1b[" not in text
    assert "Running with dbt=" not in text and " START " not in text  # no dbt log
    lines = text.splitlines()
    assert len(lines) < 150, text
    builds = [line for line in lines if re.match(r"^\s+dbt build: ", line)]
    assert len(builds) == 2, text  # one per `kubeledger build`
    for line in builds:
        done, total = re.search(r"dbt build: (\d+)/(\d+)", line).groups()
        assert done == total and int(total) > 100, line
    loads = [line for line in lines if re.match(r"^\s+files: (\d+)/\1, \d+ files loaded", line)]
    assert len(loads) == 2, text  # one line per load: the bar's end and the load's total
    assert any(line.strip().startswith("published ") for line in lines), text
