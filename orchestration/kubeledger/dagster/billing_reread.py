"""Billing re-read: load again the export files that cover the last N days (1 to 366).

The loader skips a billing file whose content it has ever loaded. A re-read forgets, in
`raw.loaded_files`, the current load (not yet replaced by a restatement) of each billing file
whose charge periods overlap the days, so the next load reads those files again and, as for any
restated export, replaces their billing periods' rows (SPEC §11). Deliveries that a restatement
replaced stay remembered, so they never come back. This is how billing rows pruned by retention
return for a backfill.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from kubeledger.dagster.landing_files import describe
from kubeledger.quality.tables import BILLING_TABLES

MIN_DAYS, MAX_DAYS = 1, 366


def validate_reread_days(days: int | None) -> str | None:
    """Why `billing_reread_days` is invalid, or None."""
    if days is None or MIN_DAYS <= days <= MAX_DAYS:
        return None
    return (
        f"billing_reread_days: {days} is outside {MIN_DAYS}..{MAX_DAYS}; a billing re-read "
        f"covers 1 to 366 days (set it to the number of days to read again, or leave it empty)"
    )


def mark_billing_for_reread(
    con: duckdb.DuckDBPyConnection, landing: Path, first_day: dt.date, last_day: dt.date
) -> list[str]:
    """Forget the current loads of the billing files covering any day of the range, so the
    next load reads them again; return their paths."""
    tables = [table.name for table in BILLING_TABLES]
    placeholders = ", ".join("?" for _ in tables)
    loaded = [
        source_file
        for (source_file,) in con.execute(
            f"select distinct source_file from raw.loaded_files where replaced_at is null "
            f"and raw_table in ({placeholders}) order by source_file",
            tables,
        ).fetchall()
    ]
    marked = []
    for source_file in loaded:
        if not (landing / source_file).is_file():
            continue
        described = describe(landing, source_file)
        if described.first_day is None or described.last_day is None:
            continue
        if described.last_day < first_day or described.first_day > last_day:
            continue
        con.execute(
            "delete from raw.loaded_files where source_file = ? and replaced_at is null",
            [source_file],
        )
        marked.append(source_file)
    return marked
