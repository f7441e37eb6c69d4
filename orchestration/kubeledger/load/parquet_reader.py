"""Parquet files: scalars as their varchar rendering, nested values as JSON text.

A string that is empty or the text NULL is NULL (sql.NULL_STRINGS).

For formats that flatten (Google Cloud), each struct field becomes its own column named
`<struct>_<field>`; lists and maps (labels, credits, tags) stay JSON arrays / objects.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from kubeledger.load.source import Source, SourceColumn
from kubeledger.load.sql import ident, lit, null_if_missing_sql

_NESTED = {"struct", "list", "map", "array", "union"}


def _as_text(expr: str, type_id: str) -> str:
    if type_id in _NESTED:
        return f"to_json({expr})::varchar"
    return null_if_missing_sql(f"cast({expr} as varchar)")


def parquet_source(con: duckdb.DuckDBPyConnection, path: Path, *, flatten: bool) -> Source:
    relation = f"read_parquet({lit(str(path))})"
    described = con.sql(f"select * from {relation} limit 0")
    columns: list[SourceColumn] = []
    for name, dtype in zip(described.columns, described.types, strict=True):
        if flatten and dtype.id == "struct":
            for field_name, field_type in dtype.children:
                expr = f"{ident(name)}.{ident(field_name)}"
                columns.append(SourceColumn(f"{name}_{field_name}", _as_text(expr, field_type.id)))
        else:
            columns.append(SourceColumn(name, _as_text(ident(name), dtype.id)))
    return Source(relation, tuple(columns))
