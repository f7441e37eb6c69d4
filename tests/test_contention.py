"""Two writers at once: a clear error naming the process that holds the warehouse and what to
do (never DuckDB's IOException traceback), and Dagster retries with backoff."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner

from kubeledger.cli import main
from kubeledger.contention import busy_message

HOLD = (
    "import duckdb, sys, time\n"
    "con = duckdb.connect(sys.argv[1])\n"
    "print('holding', flush=True)\n"
    "time.sleep(120)\n"
)


@pytest.fixture
def held_warehouse(tmp_path):
    db = tmp_path / "busy.duckdb"
    duckdb.connect(str(db)).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "holding"
    yield db, holder.pid
    holder.kill()
    holder.wait()


@pytest.mark.parametrize(
    "args",
    [["verify"], ["bill", "--month", "2026-10"], ["build"], ["load", "LANDING"]],
    ids=["verify", "bill", "build", "load"],
)
def test_a_command_on_a_held_warehouse_names_the_holder_and_what_to_do(
    held_warehouse, tmp_path, monkeypatch, args
):
    db, pid = held_warehouse
    (tmp_path / "landing").mkdir()
    monkeypatch.setenv("KUBELEDGER_DB", str(db))
    monkeypatch.setenv("KUBELEDGER_CONFIG", str(tmp_path / "absent.yml"))
    args = [str(tmp_path / "landing") if arg == "LANDING" else arg for arg in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert f"the warehouse {db} is in use by another process: PID {pid} (" in result.output
    assert "-c import duckdb, sys, time" in result.output  # the holder's command line
    assert f"wait for that process to finish and run this again, or stop it (kill {pid})" in (
        result.output
    )
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, duckdb.Error)


def test_other_errors_are_not_mistaken_for_contention():
    assert busy_message("IO Error: No such file or directory") is None


def test_every_dagster_step_that_writes_the_warehouse_retries_with_backoff():
    from dagster import Backoff

    from kubeledger.dagster.assets_close import monthly_close
    from kubeledger.dagster.assets_dbt import ledger_models
    from kubeledger.dagster.assets_landing import landing
    from kubeledger.dagster.retention import prune_raw_billing_rows

    for step in (landing.op, ledger_models.op, monthly_close.op, prune_raw_billing_rows):
        policy = step.retry_policy
        assert policy is not None, step.name
        assert (policy.max_retries, policy.delay, policy.backoff) == (
            3,
            60,
            Backoff.EXPONENTIAL,
        ), step.name
