"""`ops.rerun_log`: one row per run that re-allocates days — when, which days, why, by whom.

The ledger asset writes the row (status `started`) before dbt runs and sets `succeeded` or
`failed` after, so a run that died half-way is still in the log. The dbt model
`fct_rerun_log` exposes it to analysts.
"""

from __future__ import annotations

import datetime as dt

import duckdb

from kubeledger.dagster.ops_tables import ensure_ops_schema
from kubeledger.dagster.run_scope import RunScope


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def record_started(con: duckdb.DuckDBPyConnection, scope: RunScope) -> None:
    ensure_ops_schema(con)
    con.execute(
        """
        insert or replace into ops.rerun_log (
            run_id, job_name, started_at, finished_at, first_day, last_day, day_count, reason,
            requested_by, as_of_date, status
        ) values (?, ?, ?, null, ?, ?, ?, ?, ?, ?, 'started')
        """,
        [
            scope.run_id,
            scope.job_name,
            _now(),
            scope.first_day,
            scope.last_day,
            scope.day_count,
            scope.reason,
            scope.requested_by,
            scope.as_of,
        ],
    )


def record_finished(con: duckdb.DuckDBPyConnection, run_id: str, *, succeeded: bool) -> None:
    con.execute(
        "update ops.rerun_log set finished_at = ?, status = ? where run_id = ?",
        [_now(), "succeeded" if succeeded else "failed", run_id],
    )
