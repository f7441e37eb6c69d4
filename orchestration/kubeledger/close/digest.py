"""Hash and copy a sealed artifact (a bill or a correction): the evidence `verify` checks.

A content hash covers every row of the artifact in its sealed tables (the bill row, its
slices, lines and billing-line references; or the correction row and its delta lines), each
row as the text of its columns in table order, rows ordered by the table's key, so the same
rows give the same hash on any engine that prints values the same way. The hash is chained:
`chain_hash = sha256(previous chain_hash, artifact id, content hash)` over the artifacts in
the order they were sealed (for bills sealed month after month: the previous month's seal),
so an artifact cannot be swapped without breaking every later link.

The copy lives outside the warehouse, under the warehouse file's folder:
`<folder>/<warehouse name>.seals/<month>/<artifact id>/` holds one Parquet file per table,
`manifest.json` (hashes, chain, row counts, each file's sha256) and `SHA256SUMS`
(`sha256sum -c` reads it). It is written once: a folder that exists is never overwritten,
and once the seal is committed its files and folder are made read-only on disk.

Crash safety: the copy is written inside the seal's transaction with `manifest.pending.json`;
only after the commit is the manifest renamed to `manifest.json` and the folder made
read-only. A pending copy whose seal never committed is moved aside by the next seal of the
same artifact; a pending copy whose seal did commit is finalized by the next `verify`.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import functools
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from kubeledger.close.sealed_schema import DDL, SCHEMA, SealError
from kubeledger.load.sql import ident, lit

COPY_SUFFIX = ".seals"
MANIFEST = "manifest.json"
PENDING_MANIFEST = "manifest.pending.json"
SUMS = "SHA256SUMS"
NULL_TEXT = "\\N"


@dataclass(frozen=True)
class ArtifactTable:
    """One sealed table as part of an artifact: its rows are those whose `owner` column is the
    artifact's id; `key` orders and matches them; `file` is its Parquet file in the copy."""

    name: str
    owner: str
    key: tuple[str, ...]
    file: str

    @property
    def qualified(self) -> str:
        return f"{SCHEMA}.{self.name}"


BILL_TABLES = (
    ArtifactTable("sealed_bills", "bill_id", ("bill_month",), "bill.parquet"),
    ArtifactTable(
        "sealed_bill_clusters", "bill_id", ("cluster_id", "cost_family"), "slices.parquet"
    ),
    ArtifactTable("sealed_bill_lines", "bill_id", ("line_id",), "lines.parquet"),
    ArtifactTable(
        "sealed_billing_line_refs",
        "bill_id",
        ("cluster_id", "cost_family", "billing_line_id"),
        "billing_line_refs.parquet",
    ),
)
CORRECTION_TABLES = (
    ArtifactTable("correction_bills", "correction_id", ("correction_id",), "correction.parquet"),
    ArtifactTable(
        "correction_bill_lines", "correction_id", ("line_id",), "correction_lines.parquet"
    ),
)


def artifact_tables(kind: str) -> tuple[ArtifactTable, ...]:
    return BILL_TABLES if kind == "bill" else CORRECTION_TABLES


@contextmanager
def _canonical_tables() -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB holding the sealed tables exactly as this version's DDL makes them."""
    with duckdb.connect() as con:
        for statement in DDL:
            con.execute(statement)
        yield con


@functools.cache
def canonical_schema() -> dict[str, list[str]]:
    """Each sealed table's columns, in order, as this version's DDL creates them."""
    with _canonical_tables() as con:
        rows = con.execute(
            "select table_name, column_name from information_schema.columns "
            "where table_schema = ? order by table_name, ordinal_position",
            [SCHEMA],
        ).fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(table, []).append(column)
    return columns


@functools.cache
def money_columns() -> frozenset[str]:
    """The names of the sealed tables' money columns (decimal at the bill scale)."""
    with _canonical_tables() as con:
        rows = con.execute(
            "select distinct column_name from information_schema.columns "
            "where table_schema = ? and data_type like 'DECIMAL(38,%'",
            [SCHEMA],
        ).fetchall()
    return frozenset(column for (column,) in rows)


@functools.cache
def canonical_constraints() -> frozenset[tuple[str, str, str]]:
    """(table, constraint type, constraint text) of every sealed table, as the DDL makes them."""
    with _canonical_tables() as con:
        return frozenset(constraints(con))


def constraints(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    return [
        (table, kind, " ".join(str(text).split()))
        for table, kind, text in con.execute(
            "select table_name, constraint_type, constraint_text from duckdb_constraints() "
            "where schema_name = ? and database_name = current_database()",
            [SCHEMA],
        ).fetchall()
    ]


def row_text_sql(table: ArtifactTable) -> str:
    """SQL for one row as text: every column in DDL order, unit-separated, NULL as \\N."""
    parts = [
        f"coalesce(cast({ident(column)} as varchar), {lit(NULL_TEXT)})"
        for column in canonical_schema()[table.name]
    ]
    return f"concat_ws(chr(31), {', '.join(parts)})"


def rows_relation(table: ArtifactTable, artifact_id: str, copy_file: Path | None = None) -> str:
    """The artifact's rows of `table`: in the warehouse, or (copy_file) in its Parquet copy."""
    if copy_file is not None:
        return f"(select * from read_parquet({lit(str(copy_file))}))"
    return f"(select * from {table.qualified} where {ident(table.owner)} = {lit(artifact_id)})"


def table_hash(
    con: duckdb.DuckDBPyConnection,
    table: ArtifactTable,
    artifact_id: str,
    copy_file: Path | None = None,
) -> tuple[int, str]:
    """(rows, sha256 of the rows' text in key order) of the artifact's rows of `table`."""
    order = ", ".join(f"cast({ident(column)} as varchar)" for column in table.key)
    count, digest = con.execute(
        f"""
        select count(*), sha256(coalesce(string_agg({row_text_sql(table)}, chr(10)
            order by {order}), ''))
        from {rows_relation(table, artifact_id, copy_file)} as rows_
        """
    ).fetchone()
    return int(count), str(digest)


def content_hash(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    artifact_id: str,
    copy_folder: Path | None = None,
) -> tuple[str, dict[str, tuple[int, str]]]:
    """The artifact's content hash and, per table, (rows, table hash)."""
    per_table = {}
    digest = hashlib.sha256(f"{kind}\n{artifact_id}\n".encode())
    for table in artifact_tables(kind):
        copy_file = copy_folder / table.file if copy_folder is not None else None
        rows, table_digest = table_hash(con, table, artifact_id, copy_file)
        per_table[table.name] = (rows, table_digest)
        digest.update(f"{table.name}\x1f{rows}\x1f{table_digest}\n".encode())
    return digest.hexdigest(), per_table


def chain_hash(previous: str | None, artifact_id: str, content: str) -> str:
    return hashlib.sha256(f"{previous or ''}\n{artifact_id}\n{content}".encode()).hexdigest()


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def warehouse_file(con: duckdb.DuckDBPyConnection) -> Path:
    (path,) = con.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchone()
    if not path:
        raise SealError("a seal needs a warehouse file (its copy lives next to it), not memory")
    return Path(path).resolve()


# Where the copies live when the warehouse is not this DuckDB connection's file: the Spark
# close seals in an in-memory working copy of the Spark store (kubeledger/spark/close.py).
_COPY_ROOT: contextvars.ContextVar[Path | None] = contextvars.ContextVar("copy_root", default=None)


@contextmanager
def copies_at(root: Path) -> Iterator[None]:
    """Within this block, the copies of every seal live under `root` (not beside a file)."""
    token = _COPY_ROOT.set(Path(root).resolve())
    try:
        yield
    finally:
        _COPY_ROOT.reset(token)


def copy_root(con: duckdb.DuckDBPyConnection) -> Path:
    """`<warehouse folder>/<warehouse file name>.seals`: where the copies of its seals live
    (or the folder `copies_at` set)."""
    override = _COPY_ROOT.get()
    if override is not None:
        return override
    db = warehouse_file(con)
    return db.parent / f"{db.name}{COPY_SUFFIX}"


def copy_folder(con: duckdb.DuckDBPyConnection, month: str, artifact_id: str) -> Path:
    return copy_root(con) / month / artifact_id


@dataclass(frozen=True)
class PendingCopy:
    """A copy written inside a seal's transaction; `finalize` it once the seal commits."""

    folder: Path
    manifest: dict


# Called with the seal's connection and its pending copy after the copy is written and before
# the seal commits: the Spark close writes the artifact's tables to Spark there, so a failure
# on Spark rolls the seal back (store.seal_month, corrections.seal_correction).
Publisher = Callable[[duckdb.DuckDBPyConnection, PendingCopy], None]


def write_copy(
    con: duckdb.DuckDBPyConnection,
    *,
    kind: str,
    artifact_id: str,
    bill_id: str,
    month: str,
    sealed_at: dt.datetime,
) -> PendingCopy:
    """Copy the artifact's rows (as this transaction sees them) to Parquet, check the copy reads
    back to the same content hash, and record the digest, chained to the last one sealed."""
    folder = copy_folder(con, month, artifact_id)
    _clear_interrupted(folder)
    folder.mkdir(parents=True)
    for table in artifact_tables(kind):
        columns = ", ".join(ident(column) for column in canonical_schema()[table.name])
        order = ", ".join(ident(column) for column in table.key)
        con.execute(
            f"copy (select {columns} from {rows_relation(table, artifact_id)} as rows_ "
            f"order by {order}) to {lit(str(folder / table.file))} (format parquet)"
        )
    content, per_table = content_hash(con, kind, artifact_id)
    copied, _ = content_hash(con, kind, artifact_id, folder)
    if copied != content:
        raise SealError(
            f"the copy of {artifact_id} at {folder} does not read back as sealed; nothing "
            "was sealed (is the disk full?)"
        )
    sequence, previous = con.execute(
        f"select coalesce(max(sequence_number), 0) + 1, arg_max(chain_hash, sequence_number) "
        f"from {SCHEMA}.seal_digests"
    ).fetchone()
    chain = chain_hash(previous, artifact_id, content)
    relative = folder.relative_to(copy_root(con).parent).as_posix()
    con.execute(
        f"insert into {SCHEMA}.seal_digests values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            artifact_id,
            sequence,
            kind,
            bill_id,
            month,
            content,
            previous,
            chain,
            relative,
            sealed_at,
        ],
    )
    manifest = {
        "artifact_id": artifact_id,
        "artifact_kind": kind,
        "bill_id": bill_id,
        "bill_month": month,
        "sequence_number": sequence,
        "content_hash": content,
        "previous_chain_hash": previous,
        "chain_hash": chain,
        "sealed_at": sealed_at.isoformat(sep=" "),
        "tables": {
            table.name: {
                "file": table.file,
                "rows": per_table[table.name][0],
                "rows_sha256": per_table[table.name][1],
                "file_sha256": file_sha256(folder / table.file),
            }
            for table in artifact_tables(kind)
        },
    }
    _write_new(folder / PENDING_MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return PendingCopy(folder, manifest)


def finalize(folder: Path) -> None:
    """Publish a committed seal's copy: manifest in place, SHA256SUMS, read-only on disk."""
    pending = folder / PENDING_MANIFEST
    if pending.exists():
        manifest = json.loads(pending.read_text())
        names = [entry["file"] for entry in manifest["tables"].values()] + [MANIFEST]
        os.replace(pending, folder / MANIFEST)
        sums = "".join(f"{file_sha256(folder / name)}  {name}\n" for name in names)
        _write_new(folder / SUMS, sums)
    for path in folder.iterdir():
        path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH)


def discard(copy: PendingCopy | None) -> None:
    """The seal did not commit: move its pending copy aside (never delete evidence)."""
    if copy is not None and copy.folder.exists():
        _clear_interrupted(copy.folder)


def _clear_interrupted(folder: Path) -> None:
    """A folder left by a seal that never committed (no final manifest) is moved aside; a
    finalized copy is never touched: it means a seal of this artifact exists or existed."""
    if not folder.exists():
        return
    if (folder / MANIFEST).exists():
        raise SealError(
            f"a finalized copy of {folder.name} already exists at {folder}, but the warehouse "
            "has no such seal: was the sealed bill deleted? Run `kubeledger verify`."
        )
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    folder.rename(folder.with_name(f"{folder.name}.interrupted-{stamp}"))


def _write_new(path: Path, text: str) -> None:
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
