"""dbt runs offline: the project turns dbt's anonymous usage tracking off (dbt_project.yml
`flags:`), so no run tries to send events to dbt Labs' collector, whatever the environment."""

from __future__ import annotations


def test_dbt_does_not_track_a_run(tmp_path, monkeypatch):
    import dbt.tracking

    from kubeledger.warehouse import run_dbt

    for name in ("DO_NOT_TRACK", "DBT_SEND_ANONYMOUS_USAGE_STATS"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "parse.duckdb"
    monkeypatch.setenv("KUBELEDGER_DB", str(db))  # restored after the test (run_dbt sets it)
    run_dbt(["parse", "--target-path", str(tmp_path / "target")], db_path=db)
    assert dbt.tracking.active_user is not None
    assert dbt.tracking.active_user.do_not_track
