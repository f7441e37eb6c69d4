"""Export a DuckDB warehouse's tables to Parquet folders Spark can register as tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from kubeledger.load.sql import ident, lit


def _column_sql(name: str, data_type: str) -> str:
    # A timestamp without time zone is written as UTC instants (isAdjustedToUTC), which Spark
    # reads as its `timestamp`; days are UTC everywhere (SPEC §1.7).
    if data_type == "TIMESTAMP":
        return f"cast({ident(name)} as timestamptz) as {ident(name)}"
    return ident(name)


def export_tables(
    db_path: Path, out_root: Path, schemas: tuple[str, ...] = ("raw", "config")
) -> list[dict[str, str]]:
    """Write each table of `schemas` to `out_root/<schema>/<table>/data.parquet`, replacing
    what was there; return [{schema, name, location}] for register_parquet_tables."""
    out_root = Path(out_root).resolve()
    tables: list[dict[str, str]] = []
    with duckdb.connect(str(db_path), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        rows = con.execute(
            "select table_schema, table_name, column_name, data_type "
            "from information_schema.columns "
            f"where table_schema in ({', '.join(lit(s) for s in schemas)}) "
            "order by table_schema, table_name, ordinal_position"
        ).fetchall()
        columns: dict[tuple[str, str], list[str]] = {}
        for schema, table, column, data_type in rows:
            columns.setdefault((schema, table), []).append(_column_sql(column, data_type))
        for (schema, table), select in columns.items():
            folder = out_root / schema / table
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            target = str(folder / "data.parquet").replace("'", "''")
            con.execute(
                f"copy (select {', '.join(select)} from {ident(schema)}.{ident(table)}) "
                f"to '{target}' (format parquet)"
            )
            tables.append({"schema": schema, "name": table, "location": str(folder)})
    return tables
