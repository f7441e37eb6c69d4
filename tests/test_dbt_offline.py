"""dbt runs offline and keeps its log: the project turns dbt's anonymous usage tracking off
(dbt_project.yml `flags:`), so no run tries to send events to dbt Labs' collector, whatever the
environment; a run without --verbose still writes dbt's log file at info level. And what else a
dbt command leaves and sees: run_results.json without the manifest, and the profile's DuckDB
settings."""

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


def test_a_run_writes_its_results_but_not_the_manifest(tmp_path, monkeypatch):
    """A command that runs nodes leaves dbt's 4 MB manifest to `dbt parse` (dbt_invoke.py)
    and still writes run_results.json, which `make bench` reads, where dbt would: here the
    folder DBT_TARGET_PATH names, relative to the project."""
    import json

    from kubeledger.paths import PROJECT_DIR
    from kubeledger.warehouse import run_dbt

    db = tmp_path / "seed.duckdb"
    monkeypatch.setenv("KUBELEDGER_DB", str(db))  # restored after the test (run_dbt sets it)
    target = tmp_path / "target"
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))
    monkeypatch.chdir(tmp_path / "..")  # not the project folder: the path is the project's
    run_dbt(["seed", "--select", "currency_minor_units"], db_path=db)
    results = json.loads((target / "run_results.json").read_text())
    statuses = {r["unique_id"]: r["status"] for r in results["results"]}
    assert statuses["seed.kubeledger.currency_minor_units"] == "success"
    assert not (target / "manifest.json").exists()
    assert not (target / "graph.gpickle").exists()
    assert (target / "partial_parse.msgpack").exists()  # the saved parse is still kept

    relative = "scratch-target-for-test"
    run_dbt(["seed", "--select", "currency_minor_units", "--target-path", relative], db_path=db)
    written = PROJECT_DIR / relative / "run_results.json"
    try:
        results = json.loads(written.read_text())["results"]
        assert "seed.kubeledger.currency_minor_units" in {r["unique_id"] for r in results}
    finally:
        import shutil

        shutil.rmtree(PROJECT_DIR / relative, ignore_errors=True)


def test_dbts_duckdb_has_the_profiles_memory_cap_and_threads(tmp_path, monkeypatch):
    """profiles.yml caps dbt's DuckDB (KUBELEDGER_DUCKDB_MEMORY_LIMIT) and sets its threads
    (KUBELEDGER_DUCKDB_THREADS) on each connection dbt-duckdb opens: a statement of a dbt
    command sees both."""
    import duckdb

    from kubeledger.warehouse import run_dbt

    db = tmp_path / "settings.duckdb"
    monkeypatch.setenv("KUBELEDGER_DB", str(db))
    monkeypatch.setenv("KUBELEDGER_DUCKDB_MEMORY_LIMIT", "1234MB")
    monkeypatch.setenv("KUBELEDGER_DUCKDB_THREADS", "3")
    result = run_dbt(
        [
            "show",
            "--inline",
            "select current_setting('memory_limit') as memory_limit, "
            "current_setting('threads') as threads",
        ],
        db_path=db,
    )
    row = tuple(result.result.results[0].agate_table.rows[0])
    with duckdb.connect(config={"memory_limit": "1234MB"}) as con:
        (expected,) = con.execute("select current_setting('memory_limit')").fetchone()
    assert expected != "1234MB"  # DuckDB prints it in its own unit
    assert (row[0], int(row[1])) == (expected, 3)
