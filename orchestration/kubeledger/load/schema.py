"""The `raw` schema: one table per format, plus `quarantine` and `loaded_files`."""

from __future__ import annotations

import duckdb

from kubeledger.load.formats import FORMATS, FormatSpec
from kubeledger.load.sql import ident

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


def raw_table_columns(spec: FormatSpec) -> tuple[tuple[str, str], ...]:
    """Column names and types of a format's raw table, in table order."""
    source = tuple((name, "varchar") for name in spec.columns)
    cluster = (("_cluster_id", "varchar"),) if spec.has_cluster_id else ()
    superseded = (SUPERSEDED_COLUMN,) if spec.kind == "billing" else ()
    return source + cluster + METADATA_COLUMNS + superseded


def _ensure_table(
    con: duckdb.DuckDBPyConnection, table: str, columns: tuple[tuple[str, str], ...]
) -> None:
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
    for name, sql_type in columns:
        if name.lower() not in existing:
            con.execute(
                f"alter table {RAW_SCHEMA}.{ident(table)} add column {ident(name)} {sql_type}"
            )


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create every raw table (empty) so that staging builds before any file of a format."""
    con.execute(f"create schema if not exists {RAW_SCHEMA}")
    for spec in FORMATS:
        _ensure_table(con, spec.raw_table, raw_table_columns(spec))
    _ensure_table(con, "quarantine", QUARANTINE_COLUMNS)
    _ensure_table(con, "loaded_files", LOADED_FILES_COLUMNS)
