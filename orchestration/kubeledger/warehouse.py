"""The warehouse: one DuckDB file, its config tables, and dbt runs against it.

One DuckDB file has one writer at a time: every function here opens the file, does its work
and closes it before dbt (which opens it itself) runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from kubeledger.config import Config, load_config, write_config_tables
from kubeledger.paths import PROFILES_DIR, PROJECT_DIR, config_path, warehouse_path


class DbtError(RuntimeError):
    """dbt reported an error; the message lists the failing nodes."""


@contextmanager
def connect(
    db_path: Path | None = None, *, read_only: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    path = Path(db_path) if db_path is not None else warehouse_path()
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def prepare_warehouse(db_path: Path | None = None, config: Config | None = None) -> Config:
    """Validate the configuration and write it, with every raw table, into the warehouse."""
    from kubeledger.close.seal import ensure_sealed_schema
    from kubeledger.dagster.ops_tables import ensure_ops_schema
    from kubeledger.load import ensure_raw_schema

    config = config if config is not None else load_config(config_path())
    with connect(db_path) as con:
        ensure_raw_schema(con)
        # the sealed tables exist from the start, so the bill marts always union them in
        ensure_sealed_schema(con)
        ensure_ops_schema(con)
        write_config_tables(con, config)
    return config


def _release_duckdb() -> None:
    """dbt-duckdb keeps its database open in-process after a run; close it, so this process
    (or the next writer) can open the file again."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:
        return
    environment = DuckDBConnectionManager._ENV
    if environment is not None:
        environment.close()
    DuckDBConnectionManager.close_all_connections()


def run_dbt(
    args: Sequence[str],
    *,
    db_path: Path | None = None,
    dbt_vars: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    manifest: Any = None,
) -> Any:
    """Run one dbt command on the project in-process, with a progress bar (dbt_invoke.py);
    raise DbtError when a node fails. `progress`, when given, also gets dbt's line per node;
    `manifest` (parse_dbt_project's) spares the command its parse."""
    from kubeledger.dbt_invoke import invoke_dbt
    from kubeledger.dbt_vars import DbtVarError, check_dbt_vars

    try:
        check_dbt_vars(dbt_vars)
    except DbtVarError as exc:
        raise DbtError(f"dbt {' '.join(args)} not run: {exc}") from exc
    command = [*args, *_project_for(db_path)]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars, default=str)]

    def _callback(event: Any) -> None:
        if progress is None:
            return
        name = event.info.name
        if name in ("LogModelResult", "LogTestResult", "LogSeedResult", "LogNodeResult"):
            progress(event.info.msg)

    try:
        result = invoke_dbt(command, callbacks=[_callback] if progress else [], manifest=manifest)
    finally:
        _release_duckdb()
    if result.exception is not None:
        raise DbtError(_busy_or(f"dbt {' '.join(args)} failed: {result.exception}"))
    if not result.success:
        failures = []
        for node_result in getattr(result.result, "results", None) or []:
            if str(node_result.status) in ("error", "fail", "runtime error"):
                name = getattr(getattr(node_result, "node", None), "name", args[0])
                failures.append(f"{name}: {node_result.message}")
        raise DbtError(
            _busy_or(f"dbt {' '.join(args)} failed:\n  " + "\n  ".join(failures or ["see logs"]))
        )
    return result


def parse_dbt_project(db_path: Path | None = None) -> Any:
    """The project parsed (dbt's manifest, for `run_dbt(manifest=...)`), quietly, without
    opening the warehouse: the build parses while the quality gate holds the file. None when
    the parse fails; the command run without a manifest then parses and reports why."""
    from kubeledger.dbt_invoke import parse_project

    return parse_project(_project_for(db_path))


def _project_for(db_path: Path | None) -> list[str]:
    """dbt's arguments for the project and its profiles, the profile pointed at the warehouse
    (`db_path`, else the configured one)."""
    path = Path(db_path) if db_path is not None else warehouse_path()
    os.environ["KUBELEDGER_DB"] = str(path)
    return ["--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROFILES_DIR)]


def _busy_or(message: str) -> str:
    """dbt's failure, or, when it failed because another process holds the file, that."""
    from kubeledger.contention import busy_message

    return busy_message(message) or message
