"""The serving copy: what analysts and BI tools read, so readers never block the writer.

DuckDB allows one writer per file, and a reader holding the warehouse open makes the next
build fail on the lock. So after every successful build and close, the analyst-facing schemas
(`marts`: the ledger, the bills, data health; `sealed`: the sealed bills) are copied into a
DuckDB file of their own beside the warehouse, `kubeledger-serving.duckdb` (another path by
`KUBELEDGER_SERVING_DB`), and as Parquet under `<serving dir>/parquet/<schema>/<table>.parquet`.

The copy is written to a temporary file and renamed over the old one (`os.replace`, atomic on
POSIX): a reader that has the old file open keeps reading the old file (the old inode lives
while it is open) and sees one consistent snapshot, never a half-written one; a connection
opened after the rename sees the new one. Views become tables (a copy must not depend on the
warehouse), except the sealed tables, created with the warehouse's own DDL (keys, checks) and
verified against the warehouse's seal copies (`<serving>.seals` links to them), so a report
presents a sealed month from the copy only if it verifies. Each Parquet file is replaced the
same way, one file at a time.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from kubeledger.console import shown
from kubeledger.paths import warehouse_path

SERVING_ENV = "KUBELEDGER_SERVING_DB"
SERVING_NAME = "kubeledger-serving.duckdb"
SERVED_SCHEMAS = ("marts", "sealed")


def serving_path(db_path: Path | str | None = None) -> Path:
    """`KUBELEDGER_SERVING_DB`, else `kubeledger-serving.duckdb` beside the warehouse."""
    text = os.environ.get(SERVING_ENV, "").strip()
    if text:
        path = Path(text)
        return path if path.is_absolute() else Path.cwd() / path
    warehouse = Path(db_path) if db_path is not None else warehouse_path()
    return warehouse.parent / SERVING_NAME


def parquet_dir(serving: Path) -> Path:
    return serving.parent / "parquet"


@dataclass
class Published:
    path: Path
    parquet: Path
    tables: list[str] = field(default_factory=list)
    rows: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"published {len(self.tables)} tables ({self.rows:,} rows) to {shown(self.path)} "
            f"and {shown(self.parquet)}/ in {self.seconds:.1f}s"
        )


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def publish(db_path: Path | str | None = None, serving: Path | None = None) -> Published:
    """Copy the served schemas of the warehouse into a new serving file and its Parquet, then
    swap them in. The warehouse is opened for the copy only (this process is its writer)."""
    started = time.monotonic()
    warehouse = Path(db_path) if db_path is not None else warehouse_path()
    serving = serving or serving_path(warehouse)
    serving.parent.mkdir(parents=True, exist_ok=True)
    temporary = serving.with_name(f".{serving.name}.{os.getpid()}.tmp")
    for leftover in (temporary, temporary.with_name(temporary.name + ".wal")):
        leftover.unlink(missing_ok=True)
    result = Published(path=serving, parquet=parquet_dir(serving))
    parquet_files: list[tuple[Path, Path]] = []
    try:
        _copy(warehouse, temporary, result, parquet_files)
    except BaseException:
        # the old copy stays as it was; nothing half-written is left beside it
        temporary.unlink(missing_ok=True)
        temporary.with_name(temporary.name + ".wal").unlink(missing_ok=True)
        for staged, _ in parquet_files:
            staged.unlink(missing_ok=True)
        raise
    _fsync(temporary)
    os.replace(temporary, serving)
    for staged, final in parquet_files:
        os.replace(staged, final)
    _remove_stale_parquet(result.parquet, {final for _, final in parquet_files})
    _link_seal_copies(warehouse, serving)
    result.seconds = time.monotonic() - started
    return result


def _copy(
    warehouse: Path, temporary: Path, result: Published, parquet_files: list[tuple[Path, Path]]
) -> None:
    """Every served table into the new DuckDB file `temporary` and a staged Parquet file each."""
    with duckdb.connect(str(warehouse)) as con:
        con.execute("set enable_progress_bar = false")
        relations = con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_catalog = current_database() and table_schema in "
            f"({', '.join(_literal(schema) for schema in SERVED_SCHEMAS)}) "
            "order by table_schema, table_name"
        ).fetchall()
        catalog = con.execute("select current_database()").fetchone()[0]
        con.execute(f"attach {_literal(str(temporary))} as serving_copy")
        try:
            for schema in sorted({schema for schema, _ in relations}):
                con.execute(f"create schema serving_copy.{_quote(schema)}")
            # parents before children: the sealed tables' foreign keys hold while rows arrive
            sealed = [table for schema, table in relations if schema == "sealed"]
            ordered = [("sealed", table) for table in _create_sealed_tables(con, catalog, sealed)]
            ordered += [(schema, table) for schema, table in relations if schema != "sealed"]
            for schema, table in ordered:
                target = f"serving_copy.{_quote(schema)}.{_quote(table)}"
                source = f"{_quote(catalog)}.{_quote(schema)}.{_quote(table)}"
                if schema == "sealed":
                    con.execute(f"insert into {target} select * from {source}")
                else:
                    con.execute(f"create table {target} as select * from {source}")
                result.rows += con.execute(f"select count(*) from {target}").fetchone()[0]
                result.tables.append(f"{schema}.{table}")
                final = result.parquet / schema / f"{table}.parquet"
                final.parent.mkdir(parents=True, exist_ok=True)
                staged = final.with_name(f".{final.name}.{os.getpid()}.tmp")
                parquet_files.append((staged, final))
                con.execute(
                    f"copy (select * from {target}) to {_literal(str(staged))} (format parquet)"
                )
            result.tables.sort()
        finally:
            con.execute(f"use {_quote(catalog)}")
            con.execute("detach serving_copy")


def _create_sealed_tables(
    con: duckdb.DuckDBPyConnection, catalog: str, tables: list[str]
) -> list[str]:
    """The sealed tables with the warehouse's own DDL (keys, checks, foreign keys), so the copy
    verifies as the warehouse does (`kubeledger verify` checks the constraints too); a table
    whose foreign key names one not created yet waits for it. Returns them in creation order."""
    ddl = dict(
        con.execute(
            "select table_name, sql from duckdb_tables() "
            "where database_name = ? and schema_name = 'sealed'",
            [catalog],
        ).fetchall()
    )
    pending = [table for table in tables if table in ddl]
    created: list[str] = []
    con.execute("use serving_copy")
    try:
        while pending:
            waiting = []
            for table in pending:
                try:
                    con.execute(ddl[table])
                    created.append(table)
                except duckdb.CatalogException:
                    waiting.append(table)
            if len(waiting) == len(pending):
                con.execute(ddl[waiting[0]])  # raises what is missing
            pending = waiting
    finally:
        con.execute(f"use {_quote(catalog)}")
    return created


def _link_seal_copies(warehouse: Path, serving: Path) -> None:
    """`<serving>.seals` points at the warehouse's seal copies (close/digest.py), the evidence
    a sealed month is verified against before the report presents it from the copy."""
    copies = warehouse.resolve().parent / f"{warehouse.name}.seals"
    link = serving.with_name(f"{serving.name}.seals")
    if not copies.is_dir():
        return
    target = os.path.relpath(copies, link.parent)
    if link.is_symlink() and os.readlink(link) == target:
        return
    staged = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    staged.unlink(missing_ok=True)
    staged.symlink_to(target, target_is_directory=True)
    os.replace(staged, link)


def _fsync(path: Path) -> None:
    """The new file is on disk before it replaces the old one (a crash leaves one of them)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_parquet(root: Path, kept: set[Path]) -> None:
    """A table no longer in the warehouse leaves no Parquet file behind."""
    for schema in SERVED_SCHEMAS:
        for path in (root / schema).glob("*.parquet"):
            if path not in kept:
                path.unlink()
