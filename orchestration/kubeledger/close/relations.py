"""Where a dbt model lives in the warehouse (its schema depends on the build's target)."""

from __future__ import annotations

import duckdb

SCHEMA_PREFERENCE = ("intermediate", "marts", "staging", "main")


def find_relation(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    """The quoted `schema.name` of a table or view by its name, or None when absent."""
    rows = con.execute(
        "select table_schema from information_schema.tables where table_name = ?", [name]
    ).fetchall()
    schemas = [row[0] for row in rows]
    if not schemas:
        return None
    ranked = sorted(
        schemas,
        key=lambda schema: (
            SCHEMA_PREFERENCE.index(schema) if schema in SCHEMA_PREFERENCE else 99,
            schema,
        ),
    )
    return f'"{ranked[0]}"."{name}"'
