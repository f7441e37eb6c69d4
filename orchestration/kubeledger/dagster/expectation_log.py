"""`ops.expectation_results`: the raw-data expectations that currently fail, per cluster-day.

A check of days [first, last] of a raw table replaces that table's earlier rows for those days
(a table without days — nodes, owners, load balancers, rate card — is charged to every day of
the range), so data health shows what fails now, not what failed once.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import duckdb

from kubeledger.dagster.ops_tables import ensure_ops_schema
from kubeledger.quality import TableValidation

SAMPLE_ROWS = 5


def record_validations(
    con: duckdb.DuckDBPyConnection,
    validations: list[TableValidation],
    first_day: dt.date,
    last_day: dt.date,
    *,
    run_id: str | None,
) -> int:
    """Replace the results of these tables and days; return the rows written."""
    ensure_ops_schema(con)
    checked_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    range_days = [first_day + dt.timedelta(days=n) for n in range((last_day - first_day).days + 1)]
    rows = []
    for validation in validations:
        for failure in validation.failures:
            groups: dict[tuple[str | None, dt.date | None], list] = defaultdict(list)
            for row in failure.rows:
                days = [row.day] if row.day is not None else range_days
                for day in days:
                    groups[(row.cluster_id, day)].append(row)
            if not failure.rows:
                for day in range_days:
                    groups[(None, day)] = []
            for (cluster_id, day), failed in sorted(
                groups.items(), key=lambda item: (str(item[0][0]), str(item[0][1]))
            ):
                sample = (
                    "; ".join(
                        f"{row.source_file} row {row.row_number}" for row in failed[:SAMPLE_ROWS]
                    )
                    or failure.observed
                )
                rows.append(
                    [
                        validation.raw_table,
                        validation.suite_name,
                        failure.expectation,
                        failure.column,
                        failure.description,
                        cluster_id,
                        day,
                        len(failed) if failed else failure.unexpected_count,
                        sample,
                        run_id,
                        checked_at,
                    ]
                )
    con.execute("begin transaction")
    try:
        for validation in validations:
            con.execute(
                "delete from ops.expectation_results where raw_table = ? "
                "and (usage_date between ? and ? or usage_date is null)",
                [validation.raw_table, first_day, last_day],
            )
        if rows:
            con.executemany(
                "insert into ops.expectation_results values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    return len(rows)
