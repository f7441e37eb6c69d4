"""Schema `ops`: what the orchestration records about its own runs, read by the health marts.

These three are created by Python (never by dbt, so a full refresh cannot drop them):
- `ops.rerun_log`: one row per run that re-allocated days (when, which days, why, by whom);
- `ops.expectation_results`: the expectations that currently fail, one row per raw table,
  expectation, cluster and day (a later check of the same days replaces them);
- `ops.validated_files`: the landing files (by content hash) whose every row held every
  expectation of its table's suite (by the suite's fingerprint): the build's quality gate does
  not check them again (kubeledger/quality/validate.py).

One table here is dbt's own: `ops.dbt_rebuilt_days`, the days each model rebuilt in the current
day's run, which its data tests read (macros/incremental/rebuilt_days.sql); dbt creates it at
the start of a run with a day range and keeps only the current run's rows.
"""

from __future__ import annotations

import duckdb

SCHEMA = "ops"

DDL = (
    f"create schema if not exists {SCHEMA}",
    f"""
    create table if not exists {SCHEMA}.rerun_log (
        run_id varchar primary key,
        job_name varchar,
        started_at timestamp not null,
        finished_at timestamp,
        first_day date not null,
        last_day date not null,
        day_count integer not null,
        reason varchar not null
            check (reason in ('schedule', 'late_data', 'manual', 'backfill')),
        requested_by varchar,
        as_of_date date,
        status varchar not null check (status in ('started', 'succeeded', 'failed'))
    )
    """,
    f"""
    create table if not exists {SCHEMA}.expectation_results (
        raw_table varchar not null,
        suite_name varchar not null,
        expectation varchar not null,
        column_name varchar,
        description varchar not null,
        cluster_id varchar,
        usage_date date,
        unexpected_count bigint not null,
        sample_rows varchar,
        run_id varchar,
        checked_at timestamp not null
    )
    """,
    f"""
    create table if not exists {SCHEMA}.validated_files (
        raw_table varchar not null,
        file_hash varchar not null,
        suite_fingerprint varchar not null,
        source_file varchar not null,
        validated_at timestamp not null
    )
    """,
)


def ensure_ops_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create schema `ops` and its tables when missing; never drops anything."""
    for statement in DDL:
        con.execute(statement)
