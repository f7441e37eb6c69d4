"""The `raw` schema: one table per format, plus `quarantine` and `loaded_files`."""

from __future__ import annotations

import duckdb

from kubeledger.load.formats import FORMATS, ROW_ADDRESS, FormatSpec
from kubeledger.load.sql import ident, source_day_sql

RAW_SCHEMA = "raw"

METADATA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("_extra", "varchar"),
    ("_source_file", "varchar"),
    ("_row_number", "bigint"),
    ("_file_hash", "varchar"),
    ("_loaded_at", "timestamp"),
)

QUARANTINE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("_source_file", "varchar"),
    ("_row_number", "bigint"),
    ("format", "varchar"),
    ("column_name", "varchar"),
    ("reason", "varchar"),
    ("raw_value", "varchar"),
    ("_loaded_at", "timestamp"),
    ("_file_hash", "varchar"),
    # what of the row reads: the cluster and day it would have fed, its billing account
    ("_cluster_id", "varchar"),
    ("usage_date", "date"),
    ("billing_account_id", "varchar"),
    # true: an optional value (a unit price, a quantity) that did not read; it was nulled and
    # the row loaded. false/NULL: the row was not loaded.
    ("row_kept", "boolean"),
)

LOADED_FILES_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source_file", "varchar"),
    ("file_hash", "varchar"),
    ("format", "varchar"),
    ("raw_table", "varchar"),
    ("rows_loaded", "bigint"),
    ("rows_quarantined", "bigint"),
    ("period_key", "varchar"),
    ("loaded_at", "timestamp"),
    ("rows_replaced", "bigint"),
    ("replaced_at", "timestamp"),
    ("cluster_id", "varchar"),
)


# A billing row a restatement replaced but a sealed bill references: kept (so the sealed line
# stays traceable to its file and row), marked with when it was superseded; staging reads only
# rows where it is NULL.
SUPERSEDED_COLUMN = ("_superseded_at", "timestamp")


# A usage report's row's day, typed once at load (sql.source_day_sql: within a day of the UTC
# day staging parses): a day's run prunes the month's raw rows by it before parsing any.
SOURCE_DAY_COLUMN = ("_source_day", "date")


def source_day_expression(spec: FormatSpec) -> str | None:
    """SQL over a raw row of `spec`: its `_source_day`; None for a format without one."""
    if spec.kind != "usage":
        return None
    day_column = ROW_ADDRESS[spec.name][0]
    assert day_column is not None, spec.name
    return source_day_sql(ident(day_column))


def raw_table_columns(spec: FormatSpec) -> tuple[tuple[str, str], ...]:
    """Column names and types of a format's raw table, in table order."""
    source = tuple((name, "varchar") for name in spec.columns)
    cluster = (("_cluster_id", "varchar"),) if spec.has_cluster_id else ()
    superseded = (SUPERSEDED_COLUMN,) if spec.kind == "billing" else ()
    source_day = (SOURCE_DAY_COLUMN,) if source_day_expression(spec) else ()
    return source + cluster + METADATA_COLUMNS + superseded + source_day


def fill_source_days(con: duckdb.DuckDBPyConnection, spec: FormatSpec) -> None:
    """Give `_source_day` to the rows of `spec`'s raw table that lack it (rows an older
    version loaded): a day's run would otherwise never read them."""
    expression = source_day_expression(spec)
    if expression is not None:
        name = ident(SOURCE_DAY_COLUMN[0])
        con.execute(
            f"update {RAW_SCHEMA}.{ident(spec.raw_table)} set {name} = {expression} "
            f"where {name} is null"
        )


def _ensure_table(
    con: duckdb.DuckDBPyConnection, table: str, columns: tuple[tuple[str, str], ...]
) -> list[str]:
    """Create `table` or add the columns it lacks; return the names of the columns added."""
    body = ", ".join(f"{ident(name)} {sql_type}" for name, sql_type in columns)
    con.execute(f"create table if not exists {RAW_SCHEMA}.{ident(table)} ({body})")
    existing = {
        row[0].lower()
        for row in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = ? and table_name = ?",
            [RAW_SCHEMA, table],
        ).fetchall()
    }
    # A column this version knows and an older warehouse lacks: add it (NULL in old rows).
    added = []
    for name, sql_type in columns:
        if name.lower() not in existing:
            con.execute(
                f"alter table {RAW_SCHEMA}.{ident(table)} add column {ident(name)} {sql_type}"
            )
            added.append(name)
    return added


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create every raw table (empty) so that staging builds before any file of a format."""
    con.execute(f"create schema if not exists {RAW_SCHEMA}")
    for spec in FORMATS:
        if SOURCE_DAY_COLUMN[0] in _ensure_table(con, spec.raw_table, raw_table_columns(spec)):
            fill_source_days(con, spec)
    _ensure_table(con, "quarantine", QUARANTINE_COLUMNS)
    _ensure_table(con, "loaded_files", LOADED_FILES_COLUMNS)
