"""Load landing files straight into the Spark warehouse's Parquet: raw tables partitioned by day.

The loader is the DuckDB one (recognition by header, quarantine, restatements, idempotence),
run in an in-memory DuckDB database, never a file: the Parquet under
`<warehouse>/parquet/raw/<table>/` is the state. A load reads the raw tables back from there,
loads the landing folder on top (files loaded before are skipped by their hash, restated
periods replace their rows), and writes every raw table again, each into a new folder that
then replaces the old one.

The hourly usage reports and the billing exports are partitioned by the UTC day their rows
are for (`_partition_date=YYYY-MM-DD/`, from the column kubeledger.load.formats.ROW_ADDRESS
names: a report's `interval_start`, a bill's usage start or charge date; `none` when it does
not read), so Spark prunes by day; the small tables (nodes, owners, Services, rate card,
quarantine, loaded files, configuration) are one file each.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb

from kubeledger.config import Config, write_config_tables
from kubeledger.load import LoadSummary, ensure_raw_schema, fill_source_days, load_landing
from kubeledger.load.formats import FORMATS, ROW_ADDRESS
from kubeledger.load.sql import ident, lit, period_day_sql

PARTITION_COLUMN = "_partition_date"
SPARK_TYPES = {
    "VARCHAR": "string",
    "BIGINT": "bigint",
    "INTEGER": "int",
    "DOUBLE": "double",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamp",
}


def _day_columns() -> dict[str, str]:
    """raw table -> the column that says which UTC day a row is for."""
    return {
        spec.raw_table: ROW_ADDRESS[spec.name][0]
        for spec in FORMATS
        if ROW_ADDRESS.get(spec.name, (None,))[0] is not None
    }


def _connect(root: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    con.execute("set TimeZone = 'UTC'")
    con.execute(f"set temp_directory = {lit(str(root / 'tmp' / 'duckdb'))}")
    con.execute(f"set memory_limit = {lit(os.environ.get('KUBELEDGER_LOAD_MEMORY_LIMIT', '3GB'))}")
    return con


def _columns(con: duckdb.DuckDBPyConnection, schema: str) -> dict[str, list[tuple[str, str]]]:
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = ? order by table_name, ordinal_position",
        [schema],
    ).fetchall():
        columns.setdefault(table, []).append((column, data_type))
    return columns


def _restore(con: duckdb.DuckDBPyConnection, raw_root: Path) -> None:
    """Read the raw tables a previous load wrote back into the in-memory database."""
    for table, columns in _columns(con, "raw").items():
        files = sorted((raw_root / table).rglob("*.parquet")) if (raw_root / table).exists() else []
        if not files:
            continue
        pattern = lit(str(raw_root / table / "**" / "*.parquet"))
        present = {
            row[0]
            for row in con.execute(
                f"describe select * from read_parquet({pattern}, hive_partitioning = true, "
                "union_by_name = true)"
            ).fetchall()
        }
        names = [name for name, _ in columns if name in present]
        selected = ", ".join(ident(name) for name in names)
        con.execute(
            f"insert into raw.{ident(table)} ({selected}) select {selected} from "
            f"read_parquet({pattern}, hive_partitioning = true, union_by_name = true)"
        )


def _select_sql(columns: list[tuple[str, str]]) -> str:
    # A timestamp without time zone is written as a UTC instant (isAdjustedToUTC), which Spark
    # reads as its `timestamp`; days are UTC everywhere (SPEC §1.7).
    return ", ".join(
        f"cast({ident(name)} as timestamptz) as {ident(name)}"
        if data_type == "TIMESTAMP"
        else ident(name)
        for name, data_type in columns
    )


def _spark_columns(columns: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "type": SPARK_TYPES[data_type]} for name, data_type in columns]


def _write(
    con: duckdb.DuckDBPyConnection, schema: str, root: Path, *, partition: bool
) -> list[dict]:
    """Write each table of `schema` to `root/<table>/` (replacing the folder when its files
    differ); return the table list register_parquet_tables takes, each with `changed`."""
    day_columns = _day_columns() if partition else {}
    tables = []
    for table, columns in _columns(con, schema).items():
        folder = root / table
        fresh = root / f".{table}.new"
        if fresh.exists():
            shutil.rmtree(fresh)
        fresh.parent.mkdir(parents=True, exist_ok=True)
        select = _select_sql(columns)
        entry: dict = {"schema": schema, "name": table, "location": str(folder)}
        if table in day_columns:
            day = period_day_sql(ident(day_columns[table]))
            fresh.mkdir()
            con.execute(
                f"copy (select {select}, coalesce({day}, 'none') as {PARTITION_COLUMN} "
                f"from {schema}.{ident(table)}) to {lit(str(fresh))} "
                f"(format parquet, partition_by ({PARTITION_COLUMN}), filename_pattern "
                "'part-{i}')"
            )
            entry["columns"] = _spark_columns(columns) + [
                {"name": PARTITION_COLUMN, "type": "string"}
            ]
            entry["partitioned_by"] = PARTITION_COLUMN
        else:
            fresh.mkdir()
            con.execute(
                f"copy (select {select} from {schema}.{ident(table)}) to "
                f"{lit(str(fresh / 'data.parquet'))} (format parquet)"
            )
        entry["changed"] = _folder_digest(fresh) != _folder_digest(folder)
        if entry["changed"]:
            if folder.exists():
                shutil.rmtree(folder)
            fresh.rename(folder)
        else:
            shutil.rmtree(fresh)
        tables.append(entry)
    return tables


def _folder_digest(folder: Path) -> str | None:
    """A hash of a table folder's files (names and bytes); None when it does not exist."""
    if not folder.exists():
        return None
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.parquet")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def load_raw_parquet(
    landing: Path, parquet_root: Path, *, progress: Callable[[str], None] | None = None
) -> tuple[LoadSummary, list[dict]]:
    """Load `landing` on top of the raw Parquet under `parquet_root/raw/`; return the summary
    and the raw tables to register."""
    parquet_root.mkdir(parents=True, exist_ok=True)
    with _connect(parquet_root) as con:
        ensure_raw_schema(con)
        _restore(con, parquet_root / "raw")
        for spec in FORMATS:  # Parquet an older version wrote has no `_source_day`
            fill_source_days(con, spec)
        summary = load_landing(con, landing, progress=progress)
        tables = _write(con, "raw", parquet_root / "raw", partition=True)
    return summary, tables


def write_config_parquet(config: Config, parquet_root: Path) -> list[dict]:
    """Write the configuration's tables to `parquet_root/config/`; return them to register."""
    with _connect(parquet_root) as con:
        write_config_tables(con, config)
        return _write(con, "config", parquet_root / "config", partition=False)
