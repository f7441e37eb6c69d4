"""dbt runs offline and keeps its log: the project turns dbt's anonymous usage tracking off
(dbt_project.yml `flags:`), so no run tries to send events to dbt Labs' collector, whatever the
environment; a run without --verbose still writes dbt's log file at info level."""

from __future__ import annotations


def test_a_dbt_run_is_not_tracked_and_is_logged_to_its_file(tmp_path, monkeypatch):
    import dbt.tracking

    from kubeledger.warehouse import run_dbt

    for name in ("DO_NOT_TRACK", "DBT_SEND_ANONYMOUS_USAGE_STATS", "KUBELEDGER_VERBOSE"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "parse.duckdb"
    monkeypatch.setenv("KUBELEDGER_DB", str(db))  # restored after the test (run_dbt sets it)
    logs = tmp_path / "logs"
    run_dbt(
        ["parse", "--target-path", str(tmp_path / "target"), "--log-path", str(logs)], db_path=db
    )
    assert dbt.tracking.active_user is not None
    assert dbt.tracking.active_user.do_not_track
    log = (logs / "dbt.log").read_text()
    assert "Running with dbt=" in log
    assert "[debug]" not in log
