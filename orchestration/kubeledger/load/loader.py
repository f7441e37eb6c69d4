"""Load a landing folder into the warehouse's `raw` schema, set-based, in one transaction.

For each file: recognise it by its header, stage it (a DuckDB database of the load's own, in
memory, reads it into a table in file order, every column varchar), send rows with unreadable
typed values to raw.quarantine, and append the rest to its raw table. The staging database
commits each statement: a replaced stage table is freed at once, where one in the warehouse's
transaction would be kept on disk until the load commits (gigabytes at 10,000 nodes). The
warehouse only receives the rows, streamed from the staging database as Arrow. CSV files of
one format and header are staged together (up to BATCH_MAX_FILES at a time) and go through
those statements once per batch, each row keeping its own file's path, hash, cluster and row
number. Once every file is in, rows of earlier loads that the new files restate (same billing
period and account, same cluster and hour, same supplementary file path) are deleted, except
billing rows a sealed bill references: those are kept, marked `_superseded_at` (staging skips
them), so a sealed line stays traceable to its file and row.
See docs/landing-and-raw.md.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from kubeledger.load import azure_actual
from kubeledger.load.columns import ColumnPlan, plan_columns
from kubeledger.load.csv_reader import csv_relation, csv_source
from kubeledger.load.detect import Sniffed, first_line, is_manifest, match_format, sniff
from kubeledger.load.errors import LoadError
from kubeledger.load.formats import FORMATS, ROW_ADDRESS, FormatSpec, IgnoredFormat
from kubeledger.load.json_reader import json_source
from kubeledger.load.parquet_reader import parquet_source
from kubeledger.load.schema import (
    LOADED_FILES_COLUMNS,
    QUARANTINE_COLUMNS,
    SOURCE_DAY_COLUMN,
    ensure_raw_schema,
    source_day_expression,
)
from kubeledger.load.source import Source
from kubeledger.load.sql import (
    BILLING_LINE_ID_SQL,
    ident,
    lit,
    parse_timestamp_sql,
    readable_number_sql,
    readable_timestamp_sql,
)
from kubeledger.load.summary import FileResult, LoadSummary

Progress = Callable[[str], None]

_STAGE = "kl_stage"
_NEW_KEYS = "kl_new_keys"
_BAD_VALUES = "kl_bad_values"
# Timestamp texts already found readable in this load: files repeat the same hours and days,
# and parsing a value that needs the Go or US forms costs ~0.1 ms (the cast is tried first).
_READABLE_TIMESTAMPS = "kl_readable_timestamps"
_CHECKED_TIMESTAMPS = "kl_checked_timestamps"
_TIMESTAMP_REASON = (
    "not a timestamp (expected e.g. 2026-10-06 18:00:00 +0000 UTC, 2026-10-06T18:00:00Z "
    "or 10/06/2026)"
)
_NUMBER_REASON = "not a number"


@dataclass
class _Planned:
    """A file that passed every check that can be made before reading it whole."""

    index: int
    path: Path
    source_file: str
    file_hash: str
    spec: FormatSpec
    source: Source
    plan: ColumnPlan
    cluster_id: str | None
    result: FileResult
    stamp: tuple[int, int] = (0, 0)  # (size, mtime_ns) when it was hashed
    sniffed: Sniffed | None = None


def load_landing(
    db_path_or_connection: str | Path | duckdb.DuckDBPyConnection,
    landing_dir: str | Path,
    *,
    progress: Progress | None = None,
) -> LoadSummary:
    """Load every file under `landing_dir` into the raw tables of the warehouse.

    `db_path_or_connection` is a DuckDB file path (created if missing, closed afterwards) or
    an open connection (left open, and not inside a transaction: the load is one transaction
    of its own). Raises LoadError, naming the file and column, when a file cannot be loaded;
    then nothing of this call is kept.
    """
    landing = Path(landing_dir)
    if not landing.is_dir():
        raise LoadError(str(landing), "is not a folder.", fix="Pass the landing folder.")
    if isinstance(db_path_or_connection, duckdb.DuckDBPyConnection):
        con, owned = db_path_or_connection, False
    else:
        db_path = Path(db_path_or_connection)
        db_path.parent.mkdir(parents=True, exist_ok=True)
        con, owned = duckdb.connect(str(db_path)), True
    try:
        with _load_settings(con):
            return _load(con, landing, progress or (lambda _line: None))
    finally:
        if owned:
            con.close()


# Settings a load needs, whatever the caller's connection has: timestamps are parsed and
# printed in UTC (SPEC §1.7), and CREATE TABLE AS keeps the file's row order, which is where
# `_row_number` comes from. Memory is capped (DuckDB spills past it) so a multi-GB pod report
# does not fill the machine's RAM with cache: measured at 1,000 nodes, 3 GB peak instead of
# 10 GB for 2% more time. KUBELEDGER_LOAD_MEMORY_LIMIT overrides it.
_LOAD_SETTINGS = {
    "TimeZone": "UTC",
    "preserve_insertion_order": "true",
    "memory_limit": os.environ.get("KUBELEDGER_LOAD_MEMORY_LIMIT", "3GB"),
}


@dataclass(frozen=True)
class _Connections:
    """The warehouse (one transaction: the load) and the load's staging database: `stage`
    runs the staging statements, `stream` (a second connection to it) the selects whose rows
    the warehouse reads."""

    warehouse: duckdb.DuckDBPyConnection
    stage: duckdb.DuckDBPyConnection
    stream: duckdb.DuckDBPyConnection


@contextmanager
def _staging_database(warehouse: duckdb.DuckDBPyConnection) -> Iterator[_Connections]:
    """An in-memory DuckDB for the load's stage tables, with the load's settings. It spills
    past its memory cap to `<warehouse>.load.tmp` (next to the warehouse, on its disk)."""
    (path,) = warehouse.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchone()
    with tempfile.TemporaryDirectory(prefix="kubeledger-load-") as scratch:
        spill = Path(f"{path}.load.tmp") if path else Path(scratch) / "spill"
        stage = duckdb.connect(config={"temp_directory": str(spill)})
        stream = stage.cursor()
        try:
            for con in (stage, stream):
                for name, value in _LOAD_SETTINGS.items():
                    con.execute(f"set {name} = {lit(value)}")
            yield _Connections(warehouse, stage, stream)
        finally:
            stream.close()
            stage.close()
            shutil.rmtree(spill, ignore_errors=True)


@contextmanager
def _load_settings(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    previous = {
        name: con.execute(f"select current_setting({lit(name)})::varchar").fetchone()[0]
        for name in _LOAD_SETTINGS
    }
    for name, value in _LOAD_SETTINGS.items():
        con.execute(f"set {name} = {lit(value)}")
    try:
        yield
    finally:
        for name, value in previous.items():
            con.execute(f"set {name} = {lit(value)}")


@contextmanager
def _one_thread(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The staged rows into the raw table on one thread, in the staged order: each insert
    then fills the row group the one before left open. An order-preserving parallel insert
    closes a part-filled row group per file, which every later checkpoint spent seconds merging
    (a 1,000-node month: 186 row groups where 130 hold the rows, 16 s of checkpoints after
    the load)."""
    threads, ordered = con.execute(
        "select current_setting('threads'), current_setting('preserve_insertion_order')"
    ).fetchone()
    con.execute("set threads = 1")
    con.execute("set preserve_insertion_order = false")
    try:
        yield
    finally:
        con.execute(f"set preserve_insertion_order = {bool(ordered)}")
        con.execute(f"set threads = {int(threads)}")


@contextmanager
def _transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    con.begin()
    try:
        yield
    except BaseException:
        con.rollback()
        raise
    con.commit()


def _load(con: duckdb.DuckDBPyConnection, landing: Path, progress: Progress) -> LoadSummary:
    with _staging_database(con) as cons:
        return _load_staged(cons, landing, progress)


def _load_staged(cons: _Connections, landing: Path, progress: Progress) -> LoadSummary:
    con = cons.warehouse
    loaded_at = datetime.now(UTC).replace(tzinfo=None)
    summary = LoadSummary(loaded_at=loaded_at)
    try:
        with _transaction(con):
            _start(cons)
            planned = _plan(con, landing, summary, progress)
            _load_planned(cons, planned, loaded_at, progress, batched=True)
        return summary
    except _BatchFailed as failed:
        printed = failed.printed
    # A batch failed and nothing was kept (the transaction was rolled back): load the same
    # plan again file by file, which raises the error of the first file that cannot be
    # loaded, naming its row, as a file-by-file load always did (and printing the same lines:
    # the batched attempt printed the first `printed` of them).
    for item in planned:
        item.result.rows_loaded = item.result.rows_quarantined = item.result.values_nulled = 0
        item.result.rows_replaced, item.result.period_key = 0, None
    with _transaction(con):
        _start(cons)
        _load_planned(cons, planned, loaded_at, progress, batched=False, printed=printed)
    return summary


def _start(cons: _Connections) -> None:
    ensure_raw_schema(cons.warehouse)
    cons.warehouse.execute(f"drop table if exists {_NEW_KEYS}")
    cons.warehouse.execute(
        f"create temp table {_NEW_KEYS} "
        "(raw_table varchar, k1 varchar, k2 varchar, file_index integer)"
    )
    cons.stage.execute(f"create or replace table {_READABLE_TIMESTAMPS} (v varchar)")


def _load_planned(
    cons: _Connections,
    planned: list[_Planned],
    loaded_at: datetime,
    progress: Progress,
    *,
    batched: bool,
    printed: int = 0,
) -> None:
    con = cons.warehouse
    _load_files(cons, planned, loaded_at, progress, batched=batched, printed=printed)
    for slot in (0, 1):
        cons.stage.execute(f"drop table if exists {_STAGE}_{slot}")
        cons.stage.execute(f"drop table if exists {_BAD_VALUES}_{slot}")
    for line in _replace_restated(con, planned, loaded_at):
        progress(line)
    _record_loaded_files(con, planned, loaded_at)
    con.execute(f"drop table if exists {_NEW_KEYS}")


def _walk(landing: Path) -> list[Path]:
    files = []
    for path in landing.rglob("*"):
        relative = path.relative_to(landing)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_file():
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(landing).as_posix())


@dataclass(frozen=True)
class _Earlier:
    """A load of some content: where it came from, and whose usage it was."""

    source_file: str
    is_usage: bool
    cluster_id: str | None


def _earlier_loads(con: duckdb.DuckDBPyConnection) -> dict[str, list[_Earlier]]:
    """Loads a file with the same content may repeat, by content hash.

    A billing or usage file is skipped once its content was ever loaded: landing folders keep
    old deliveries next to their restatements, and those must not come back. A supplementary
    file is skipped only while its content is the current version, so that going back to an
    earlier version of nodes.csv loads that version again. Usage reports are told apart by
    cluster too: two clusters can send byte-identical label reports for the same hours.
    """
    supplementary = [spec.name for spec in FORMATS if spec.kind == "supplementary"]
    usage = [spec.name for spec in FORMATS if spec.kind == "usage"]
    rows = con.execute(
        "select file_hash, source_file, list_contains(?, format), cluster_id "
        "from raw.loaded_files "
        "where replaced_at is null or not list_contains(?, format) order by loaded_at",
        [usage, supplementary],
    ).fetchall()
    earlier: dict[str, list[_Earlier]] = {}
    for file_hash, source_file, is_usage, cluster_id in rows:
        earlier.setdefault(file_hash, []).append(_Earlier(source_file, is_usage, cluster_id))
    return earlier


def _same_content_loaded(loads: list[_Earlier], cluster_of_folder: Callable[[], str]) -> str | None:
    """The earlier file whose load makes this one a repeat, if any."""
    for load in loads:
        if not load.is_usage or load.cluster_id == cluster_of_folder():
            return load.source_file
    return None


def _file_hash(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def _refuse_if_changed(item: _Planned) -> None:
    """The rows staged are those of the bytes hashed: refuse a file that changed in between
    (size, mtime or content), or a later load would skip the complete file as loaded."""
    try:
        same = _stamp(item.path) == item.stamp and _file_hash(item.path) == item.file_hash
    except OSError:
        same = False
    if not same:
        raise LoadError(
            item.source_file,
            "changed while it was being loaded (its size, time or content differs from when "
            "it was hashed); nothing of this load was kept.",
            fix="Wait until the export or copy of the file is complete, then load again.",
        )


def _plan(
    con: duckdb.DuckDBPyConnection, landing: Path, summary: LoadSummary, progress: Progress
) -> list[_Planned]:
    """Check every file before anything is written: format, required columns, manifests."""
    loaded = _earlier_loads(con)
    cluster_ids: dict[Path, str] = {}
    planned: list[_Planned] = []
    paths = _walk(landing)
    hashing = ThreadPoolExecutor(_HASH_THREADS, thread_name_prefix="kubeledger-hash")
    # every file's stamp and hash, worked out ahead of the plan on every core (the pool is
    # shut down, its queued files dropped, when the plan stops early)
    stamped = hashing.map(_stamp_and_hash, [path for path in paths if not is_manifest(path)])
    try:
        for path in paths:
            source_file = path.relative_to(landing).as_posix()
            if is_manifest(path):
                result = FileResult(source_file, "ignored", note="export manifest (not data)")
                summary.files.append(result)
                progress(result.line())
                continue
            stamp, file_hash = next(stamped)
            earlier = _same_content_loaded(
                loaded.get(file_hash, []),
                lambda path=path: _cluster_id(landing, path.parent, cluster_ids),
            )
            if earlier is not None:
                note = (
                    "already loaded (same content)"
                    if earlier == source_file
                    else f"already loaded (same content as {earlier})"
                )
                result = FileResult(source_file, "skipped", file_hash=file_hash, note=note)
                summary.files.append(result)
                progress(result.line())
                continue
            sniffed = sniff(con, path, source_file)
            spec = match_format(sniffed.header, source_file)
            if isinstance(spec, IgnoredFormat):
                loaded.setdefault(file_hash, []).append(_Earlier(source_file, False, None))
                result = FileResult(
                    source_file,
                    "ignored",
                    format=spec.name,
                    file_hash=file_hash,
                    note=f"{spec.title} (not used by kubeledger)",
                )
                summary.files.append(result)
                progress(result.line())
                continue
            source = _source(con, path, sniffed, spec)
            plan = plan_columns(spec, source.columns)
            if plan.missing_required:
                missing = ", ".join(plan.missing_required)
                plural = "columns" if len(plan.missing_required) > 1 else "column"
                raise LoadError(
                    source_file,
                    f"is a {spec.title} file but lacks the required {plural} {missing}.",
                    fix="Re-export it with every required column (docs/landing-and-raw.md lists "
                    "them), or move it out of the landing folder.",
                    column=plan.missing_required[0],
                )
            if spec.name == "azure_cost_details":
                azure_actual.refuse_by_manifest(
                    source_file, azure_actual.manifest_export_type(landing, path.parent)
                )
            cluster_id = None
            if spec.has_cluster_id:
                cluster_id = _cluster_id(landing, path.parent, cluster_ids)
            result = FileResult(
                source_file,
                "loaded",
                format=spec.name,
                raw_table=spec.raw_table,
                file_hash=file_hash,
            )
            summary.files.append(result)
            loaded.setdefault(file_hash, []).append(
                _Earlier(source_file, spec.kind == "usage", cluster_id)
            )
            planned.append(
                _Planned(
                    len(planned),
                    path,
                    source_file,
                    file_hash,
                    spec,
                    source,
                    plan,
                    cluster_id,
                    result,
                    stamp,
                    sniffed,
                )
            )
    finally:
        hashing.shutdown(cancel_futures=True)
    return planned


_HASH_THREADS = 2  # SHA-256 lets go of the GIL: 1,000 nodes' 6.6 GB hash in 2.1 s, not 4.1


def _stamp_and_hash(path: Path) -> tuple[tuple[int, int], str]:
    """The file's stamp, then its content hash (a change after the stamp then shows)."""
    stamp = _stamp(path)
    return stamp, _file_hash(path)


def _source(
    con: duckdb.DuckDBPyConnection, path: Path, sniffed: Sniffed, spec: FormatSpec
) -> Source:
    if sniffed.family == "parquet":
        return parquet_source(con, path, flatten=spec.flatten_structs)
    if sniffed.family == "json":
        return json_source(path, sniffed, flatten=spec.flatten_structs)
    return csv_source(path, sniffed)


def _cluster_id(landing: Path, folder: Path, cache: dict[Path, str]) -> str:
    """The operator manifest's `cluster_id` for reports in `folder`, else the folder's name."""
    if folder in cache:
        return cache[folder]
    cluster_id = folder.resolve().name
    manifests = [p for p in folder.iterdir() if p.is_file() and p.name.lower() == "manifest.json"]
    if manifests:
        manifest = manifests[0]
        try:
            content = json.loads(manifest.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LoadError(
                manifest.relative_to(landing).as_posix(),
                f"is not a readable JSON manifest ({exc}); the cluster id of the reports "
                "next to it comes from its cluster_id.",
                fix="Restore it from the operator package, or remove it to use the folder "
                "name as the cluster id.",
            ) from exc
        if isinstance(content, dict) and str(content.get("cluster_id") or "").strip():
            cluster_id = str(content["cluster_id"]).strip()
    cache[folder] = cluster_id
    return cluster_id


def _unreadable(
    con: duckdb.DuckDBPyConnection, item: _Planned, bad_numbers: int, table: str, slot: int
) -> list[tuple[str, str, str]]:
    """(column, reason, SQL true for a staged row whose value in it does not read), of the
    batch staged in `table` (stage table `slot`).

    Only columns with an unreadable value are returned. A clean file costs one round of
    statements over its timestamp columns, each distinct value parsed once per load
    (timestamps repeat: hours, days; the readable ones are kept in `_READABLE_TIMESTAMPS`);
    `bad_numbers` is the count of staged rows with a number that does not read
    (`_number_check_sql`, counted with the rows). Statements are few on purpose: a load is
    thousands of small files, and each statement costs milliseconds whatever its size.
    """
    problems = []
    timestamps = [col for col in item.spec.timestamps if col in item.plan.present]
    if timestamps:
        # Materialized, so that the parse is not pushed below the DISTINCT.
        distinct = " union all ".join(
            f"select distinct {lit(col)} as column_name, {ident(col)} as v from {table}"
            for col in timestamps
        )
        con.execute(
            f"create or replace temp table {_CHECKED_TIMESTAMPS} as "
            f"with d as materialized ({distinct}), "
            "fresh as materialized (select distinct v from d where v is not null "
            f"and v not in (select v from {_READABLE_TIMESTAMPS})) "
            f"select v, {readable_timestamp_sql('v')} as is_readable from fresh"
        )
        unreadable = con.execute(
            f"insert into {_READABLE_TIMESTAMPS} "
            f"select v from {_CHECKED_TIMESTAMPS} where is_readable; "
            f"select count(*) from {_CHECKED_TIMESTAMPS} where not is_readable"
        ).fetchone()[0]
        bad = []
        if unreadable:
            bad = con.execute(
                f"with d as materialized ({distinct}) select column_name, v from d "
                f"where v in (select v from {_CHECKED_TIMESTAMPS} where not is_readable)"
            ).fetchall()
        bad_values = f"{_BAD_VALUES}_{slot}"  # read when the batch's rows are sent
        if bad:
            con.execute(f"create or replace table {bad_values} (column_name varchar, v varchar)")
            con.executemany(f"insert into {bad_values} values (?, ?)", bad)
        for col in timestamps:
            if any(column == col for column, _ in bad):
                test = (
                    f"{ident(col)} in (select v from {bad_values} where column_name = {lit(col)})"
                )
                problems.append((col, _TIMESTAMP_REASON, f"coalesce({test}, false)"))
    if bad_numbers:
        problems += [
            (col, _NUMBER_REASON, f"not {readable_number_sql(ident(col))}")
            for col in _numbers(item)
        ]
    return problems


def _numbers(item: _Planned) -> list[str]:
    return [col for col in item.spec.numbers if col in item.plan.present]


def _number_check_sql(item: _Planned) -> str:
    """SQL counting the staged rows with a number that does not read (0 without numbers)."""
    checks = [readable_number_sql(ident(col)) for col in _numbers(item)]
    if not checks:
        return "0"
    return f"count(*) filter (where not ({' and '.join(checks)}))"


_CSV_ERROR_LINE = re.compile(r"CSV Error on Line: (\d+)")
_CSV_FIELD_COUNT = re.compile(r"Expected Number of Columns: (\d+) Found: (\d+)")


def _read_error(source_file: str, exc: duckdb.Error) -> LoadError:
    """The LoadError of a file DuckDB could not read; a ragged CSV row is named by its row.
    A full disk or memory is this machine's, not the file's: said so."""
    text = str(exc)
    ran_out = (
        "disk"
        if "No space left on device" in text
        else "memory"
        if isinstance(exc, duckdb.OutOfMemoryException)
        else None
    )
    if ran_out:
        return LoadError(
            source_file,
            f"could not be staged: this machine ran out of {ran_out} while loading it "
            f"({_describe_read_error(exc)}).",
            fix="The file is not at fault. Free disk space where the warehouse and its "
            "temporary folders (<warehouse>.tmp, <warehouse>.load.tmp) are, or raise "
            "KUBELEDGER_LOAD_MEMORY_LIMIT if memory ran out, and load again. Nothing of this "
            "load was kept.",
        )
    counts = _CSV_FIELD_COUNT.search(text)
    line = _CSV_ERROR_LINE.search(text)
    if counts and line:
        expected, found = int(counts.group(1)), int(counts.group(2))
        # DuckDB counts the header as line 1; rows are numbered from the first data row.
        row = int(line.group(1)) - 1
        # DuckDB's own words first (its "Original Line" is left out: a CUR row is kilobytes).
        return LoadError(
            source_file,
            f"cannot be read: CSV Error on Line: {line.group(1)} (data row {row}): "
            f"Expected Number of Columns: {expected} Found: {found}; the row has {found} "
            f"fields where the header has {expected}.",
            fix="A field with a comma or a line break must be quoted: re-export the file, or "
            "fix or remove that row. Nothing of this load was kept.",
        )
    return LoadError(
        source_file,
        f"cannot be read: {_describe_read_error(exc)}.",
        fix="It may be truncated or damaged: re-export or re-download it. Nothing of this "
        "load was kept.",
    )


def _describe_read_error(exc: duckdb.Error) -> str:
    lines = []
    for line in str(exc).strip().splitlines():
        if not line.strip() or line.startswith("Possible fixes"):
            break
        lines.append(line.strip())
    text = "; ".join(lines) if lines else first_line(exc)
    for prefix in ("Invalid Input Error: ", "IO Error: ", "Conversion Error: "):
        text = text.removeprefix(prefix)
    return text[:400]


# Consecutive CSV files of one format, header and compression are staged by one `read_csv`
# and loaded by one round of statements: each statement costs milliseconds whatever its size,
# and a landing folder is thousands of small files (the operator's 4 reports per cluster-day).
BATCH_MAX_FILES = 256
# Of text staged (a gzip file counts what it unpacks to): a batch's stage table then stays
# within the load's memory cap instead of spilling gigabytes to disk.
BATCH_MAX_BYTES = 512 * 1024 * 1024
_FILE = "_kl_file"  # the stage column holding a row's file: its 1-based position in the batch


def _text_bytes(item: _Planned) -> int:
    """About how many bytes of text a file stages: a gzip file's unpacked size (its trailer's
    ISIZE: the last member's size, modulo 4 GiB), else its size on disk. A gzip usage report
    unpacks to 6 to 8 times its size."""
    size = item.stamp[0]
    if item.sniffed is None or item.sniffed.compression != "gzip" or size < 18:
        return size
    with item.path.open("rb") as handle:
        handle.seek(-4, os.SEEK_END)
        unpacked = int.from_bytes(handle.read(4), "little")
    return max(size, unpacked)


def _batch_key(item: _Planned) -> tuple[object, ...] | None:
    """Items with equal keys can be staged together; None: this one is staged alone."""
    sniffed = item.sniffed
    if sniffed is None or sniffed.family != "csv" or item.spec.name == "azure_cost_details":
        return None
    return (item.spec.name, sniffed.header, sniffed.compression, item.plan)


def _batches(planned: list[_Planned]) -> list[list[_Planned]]:
    """The files in batches, in the order of each batch's first file.

    The operator writes a cluster-day's 4 reports side by side, so files of one format are
    rarely consecutive: a batch gathers the format's later files too. A raw table's rows still
    arrive in file order: a file of the same table but another header closes its open batch.
    """
    batches: list[list[_Planned]] = []
    open_batches: dict[str, tuple[tuple[object, ...], list[_Planned], list[int]]] = {}
    for item in planned:
        key = _batch_key(item)
        text_bytes = _text_bytes(item) if key is not None else 0
        table = item.spec.raw_table
        current = open_batches.get(table)
        if current is not None:
            current_key, batch, size = current
            if (
                key != current_key
                or len(batch) >= BATCH_MAX_FILES
                or size[0] + text_bytes > BATCH_MAX_BYTES
            ):
                del open_batches[table]
            else:
                batch.append(item)
                size[0] += text_bytes
                continue
        batches.append([item])
        if key is not None:
            open_batches[table] = (key, batches[-1], [text_bytes])
    return batches


class _NotInFileOrder(Exception):
    """A staged batch whose rows do not follow file, then row order."""


def _load_files(
    cons: _Connections,
    planned: list[_Planned],
    loaded_at: datetime,
    progress: Progress,
    *,
    batched: bool,
    printed: int,
) -> None:
    """Load the planned files, batch by batch, printing each file's line in plan order (but
    the first `printed`).

    While a batch's rows go to the warehouse (one thread: the rows fill its row groups in
    order), the next batch is staged and checked on another thread, in the other of two stage
    tables. A batch's error still comes at its turn: every file before a batch of one file is
    loaded by then, so its error is the one a file-by-file load raises. A batch of several files
    that fails raises _BatchFailed: a file after its first may fail, or one of a later batch
    that comes before it, and only a file-by-file load tells which comes first."""
    done: set[int] = set()
    batches = _batches(planned) if batched else [[item] for item in planned]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubeledger-stage") as staging:
        ahead: Future[_Staged] | None = None
        for number, batch in enumerate(batches):
            slot = number % 2
            try:
                next_up, ahead = ahead, None
                try:
                    staged = next_up.result() if next_up else _stage(cons.stage, batch, slot)
                except _NotInFileOrder:
                    staged = None
                if staged is not None and number + 1 < len(batches):
                    ahead = staging.submit(_stage, cons.stage, batches[number + 1], 1 - slot)
                if staged is not None:
                    _insert(cons, staged, loaded_at)
                else:
                    # Rows found out of file order (before anything was written): file by file.
                    for item in batch:
                        _insert(cons, _stage(cons.stage, [item], slot), loaded_at)
            except (LoadError, duckdb.Error) as exc:
                if len(batch) > 1:
                    raise _BatchFailed(printed) from exc
                raise
            done.update(item.index for item in batch)
            while printed < len(planned) and planned[printed].index in done:
                progress(planned[printed].result.line())
                printed += 1


class _BatchFailed(Exception):
    """A batch of several files could not be loaded: load file by file to find out why."""

    def __init__(self, printed: int) -> None:
        super().__init__(f"a batch failed after {printed} progress lines")
        self.printed = printed


def _per_file(values: list[str]) -> str:
    """SQL over a staged row: the value (SQL) of its file, among one per file of the batch."""
    if len(values) == 1:
        return values[0]
    return f"[{', '.join(values)}][{_FILE}]"


@dataclass(frozen=True)
class _Rows:
    """SQL over a staged row: its number in its file, its file's path, hash and cluster."""

    row_number: str
    source_file: str
    file_hash: str
    cluster: str


@dataclass(frozen=True)
class _Staged:
    """A batch staged and checked in the staging database, ready to go to the warehouse."""

    items: list[_Planned]
    table: str  # its stage table
    position: str  # SQL over a staged row: its file's 1-based position in the batch
    counts: dict[int, tuple[int, int, int, int]]  # by position: first and last rowid, rows, _
    rows: _Rows
    problems: list[tuple[str, str, str]]  # (column, reason, SQL true: the row is quarantined)
    bad_rows: dict[int, int]  # rows quarantined, by position
    dropped: list[tuple[str, str]]  # (optional column, SQL true: its value is dropped)
    nulled: dict[int, int]  # optional values dropped, by position

    @property
    def loaded_rows(self) -> str:
        """SQL true for a staged row that is loaded."""
        if not self.bad_rows:
            return "true"
        return f"not ({' or '.join(sql for _, _, sql in self.problems)})"


def _stage(con: duckdb.DuckDBPyConnection, items: list[_Planned], slot: int) -> _Staged:
    """Stage a batch in the staging database's stage table `slot` (0 or 1) and check it:
    nothing is written to the warehouse."""
    table = f"{_STAGE}_{slot}"
    first = items[0]
    spec, plan = first.spec, first.plan
    select = ", ".join(f"{expr} as {ident(name)}" for name, expr in plan.select)
    if len(items) == 1:
        relation, file_column, position = first.source.relation, "", "1"
    else:
        assert first.sniffed is not None
        relation = csv_relation([item.path for item in items], first.sniffed, filename=True)
        paths = ", ".join(lit(str(item.path)) for item in items)
        file_column, position = f", list_position([{paths}], filename) as {_FILE}", _FILE
    try:
        # Order-preserving (preserve_insertion_order is on): rowid follows the files' rows.
        con.execute(
            f"create or replace table {table} as select {select}{file_column} from {relation}"
        )
    except duckdb.Error as exc:
        if len(items) > 1:
            raise
        raise _read_error(first.source_file, exc) from exc
    for item in items:
        _refuse_if_changed(item)
    if spec.name == "azure_cost_details":
        azure_actual.refuse_by_rows(con, table, plan.present, first.source_file)
    stats = con.execute(
        f"select {position}, min(rowid), max(rowid), count(*), {_number_check_sql(first)} "
        f"from {table} group by all order by 1"
    ).fetchall()
    counts = {pos: (low, high, n, bad) for pos, low, high, n, bad in stats if n}
    _check_file_order(counts, len(items))
    bases = [counts.get(pos, (0,))[0] for pos in range(1, len(items) + 1)]
    total = sum(n for _, _, n, _ in counts.values())
    bad_numbers = sum(bad for *_, bad in counts.values())
    rows = _Rows(
        row_number=f"(rowid - {_per_file([str(base) for base in bases])} + 1)",
        source_file=_per_file([lit(item.source_file) for item in items]),
        file_hash=_per_file([lit(item.file_hash) for item in items]),
        cluster=_per_file([lit(item.cluster_id or "") for item in items]),
    )

    problems = _unreadable(con, first, bad_numbers, table, slot) if total else []
    bad_rows: dict[int, int] = {}
    if problems:
        any_bad = " or ".join(sql for _, _, sql in problems)
        bad_rows = dict(
            con.execute(
                f"select {position}, count(*) from {table} where {any_bad} group by all"
            ).fetchall()
        )
    staged = _Staged(items, table, position, counts, rows, problems, bad_rows, [], {})
    dropped, nulled = _unreadable_optional(con, staged)
    return dataclasses.replace(staged, dropped=dropped, nulled=nulled)


def _insert(cons: _Connections, staged: _Staged, loaded_at: datetime) -> None:
    """Send a staged batch's rows to the warehouse: its quarantined rows and dropped optional
    values to raw.quarantine, its loaded rows to the raw table, its delivery keys."""
    items, table, rows = staged.items, staged.table, staged.rows
    first = items[0]
    spec, plan = first.spec, first.plan
    loaded_at_sql = f"timestamp {lit(loaded_at.isoformat(sep=' '))}"
    quarantined = [(col, reason, sql, "false") for col, reason, sql in staged.problems]
    if staged.dropped:
        reason = f"{_NUMBER_REASON} (optional: the value was dropped, the row loaded)"
        quarantined += [(col, reason, sql, "true") for col, sql in staged.dropped]
    if quarantined:
        address = _row_address_sql(first, rows.cluster)
        parts = [
            f"select {rows.source_file}, {rows.row_number}, {lit(spec.name)}, {lit(col)}, "
            f"{lit(reason)}, {ident(col)}, {loaded_at_sql}, {rows.file_hash}, {address}, "
            f"{kept} from {table} where {sql}"
            for col, reason, sql, kept in quarantined
        ]
        _send(cons, "raw.quarantine", _QUARANTINE_NAMES, " union all ".join(parts))
    where = f" where {staged.loaded_rows}" if staged.bad_rows else ""

    metadata = {
        "_source_file": rows.source_file,
        "_row_number": rows.row_number,
        "_file_hash": rows.file_hash,
        "_loaded_at": loaded_at_sql,
    }
    if spec.has_cluster_id:
        metadata["_cluster_id"] = rows.cluster
    source_day = source_day_expression(spec)
    if source_day is not None:
        metadata[SOURCE_DAY_COLUMN[0]] = source_day
    source_names = [name for name, _ in plan.select]
    dropped = dict(staged.dropped)
    values = [
        f"case when {dropped[name]} then null else {ident(name)} end as {ident(name)}"
        if name in dropped
        else ident(name)
        for name in source_names
    ]
    with _one_thread(cons.warehouse):
        _send(
            cons,
            spec.qualified_table,
            [*source_names, *metadata],
            f"select {', '.join([*values, *metadata.values()])} from {table}{where}",
        )

    # The delivery units (billing period, cluster hour, file path) each file brings.
    k1, k2 = spec.period_key
    if spec.kind == "supplementary":
        keys = " union all ".join(
            f"select {lit(item.source_file)} as k1, '' as k2, {pos} as pos"
            for pos, item in enumerate(items, start=1)
        )
    else:
        keyed = (
            f"select *, {rows.source_file} as _source_file, {rows.cluster} as _cluster_id, "
            f"{staged.position} as _kl_position from {table}{where}"
        )
        keys = f"select distinct {k1} as k1, {k2} as k2, _kl_position as pos from ({keyed})"
    indexes = str(first.index)
    if len(items) > 1:
        indexes = f"[{', '.join(str(item.index) for item in items)}][pos]"
    new_keys = cons.stream.sql(
        f"select {lit(spec.raw_table)} as raw_table, k1, k2, {indexes} as file_index from ({keys})"
    ).to_arrow_table()
    cons.warehouse.register(_SENT, new_keys)
    try:
        cons.warehouse.execute(f"insert into {_NEW_KEYS} select * from {_SENT}")
    finally:
        cons.warehouse.unregister(_SENT)
    keys_of: dict[int, list[tuple[str | None, str | None]]] = {}
    for key1, key2, index in zip(
        *(new_keys.column(name).to_pylist() for name in ("k1", "k2", "file_index")), strict=True
    ):
        keys_of.setdefault(index, []).append((key1, key2))
    for pos, item in enumerate(items, start=1):
        result = item.result
        result.rows_loaded = staged.counts.get(pos, (0, 0, 0))[2] - staged.bad_rows.get(pos, 0)
        result.rows_quarantined = staged.bad_rows.get(pos, 0)
        result.values_nulled = staged.nulled.get(pos, 0)
        result.period_key = _period_key_text(item, keys_of.get(item.index, []))


_QUARANTINE_NAMES = [name for name, _ in QUARANTINE_COLUMNS]
_SENT = "kl_sent"  # the warehouse's name for the rows a `_send` streams to it
_SEND_BATCH_ROWS = 122_880  # one DuckDB row group


def _send(cons: _Connections, table: str, columns: list[str], select: str) -> None:
    """Insert the rows of `select` (run in the staging database) into the warehouse's
    `table` (`columns`, in the select's order), streamed as Arrow record batches."""
    reader = cons.stream.sql(select).to_arrow_reader(_SEND_BATCH_ROWS)
    cons.warehouse.register(_SENT, reader)
    try:
        cons.warehouse.execute(
            f"insert into {table} ({', '.join(ident(name) for name in columns)}) "
            f"select * from {_SENT}"
        )
    finally:
        cons.warehouse.unregister(_SENT)


def _check_file_order(counts: dict[int, tuple[int, int, int, int]], files: int) -> None:
    """Row numbers are `rowid - first rowid of the file + 1`: that needs each file's rows to be
    one run of rowids, the files' runs in batch order."""
    previous = -1
    for pos in sorted(counts):
        low, high, n, _ = counts[pos]
        if not 1 <= pos <= files or high - low + 1 != n or low <= previous:
            raise _NotInFileOrder
        previous = high


def _unreadable_optional(
    con: duckdb.DuckDBPyConnection, staged: _Staged
) -> tuple[list[tuple[str, str]], dict[int, int]]:
    """The optional numbers (unit prices, quantities) that do not read, in rows that are
    loaded: (column, SQL true where its value is dropped) for each column with one, and the
    count of values dropped by file position. Each is recorded in raw.quarantine with
    `row_kept` and loaded as NULL: the row and its cost stay."""
    item = staged.items[0]
    columns = [col for col in item.spec.optional_numbers if col in item.plan.present]
    if not columns:
        return [], {}
    checks = {col: f"not {readable_number_sql(ident(col))}" for col in columns}
    (bad,) = con.execute(
        f"select count(*) from {staged.table} "
        f"where ({' or '.join(checks.values())}) and {staged.loaded_rows}"
    ).fetchall()[0]
    if not bad:
        return [], {}
    dropped: list[tuple[str, str]] = []
    totals: dict[int, int] = {}
    for col, unreadable in checks.items():
        where = f"{unreadable} and {staged.loaded_rows}"
        counted = con.execute(
            f"select {staged.position}, count(*) from {staged.table} where {where} group by all"
        ).fetchall()
        if counted:
            dropped.append((col, where))
        for pos, count in counted:
            totals[pos] = totals.get(pos, 0) + count
    return dropped, totals


def _row_address_sql(item: _Planned, cluster_sql: str) -> str:
    """SQL over a staged row: the cluster, UTC day and billing account it would have fed, each
    NULL when it does not read (data health counts a quarantined row there)."""
    day_column, cluster_column, account = ROW_ADDRESS.get(item.spec.raw_table, (None, None, None))
    present = set(item.plan.present)
    if item.spec.has_cluster_id:
        cluster = cluster_sql
    elif cluster_column in present:
        cluster = ident(cluster_column)
    else:
        cluster = "null"
    day = "null"
    if day_column in present:
        day = f"cast(timezone('UTC', {parse_timestamp_sql(ident(day_column))}) as date)"
    account_sql = "null"
    if account is not None and all(
        name in present for name in _names_in(account, item.spec.columns)
    ):
        account_sql = account
    return (
        f"nullif(trim(cast({cluster} as varchar)), ''), {day}, "
        f"nullif(trim(cast({account_sql} as varchar)), '')"
    )


def _names_in(expression: str, columns: tuple[str, ...]) -> list[str]:
    return [name for name in columns if name in expression]


def _period_key_text(item: _Planned, keys: list[tuple[str | None, str | None]]) -> str | None:
    """What a file delivers, for raw.loaded_files: its path (supplementary), its cluster and
    hour range (usage), or its `period|account` keys in order (billing)."""
    if item.spec.kind == "supplementary":
        return item.source_file
    if item.spec.kind == "usage":
        if not keys:
            return None
        hours = [k2 for _, k2 in keys if k2 is not None]
        first, last = (min(hours), max(hours)) if hours else (None, None)
        span = f"{first}" if len(keys) == 1 else f"{first}..{last}"
        return f"{item.cluster_id}|{span}"
    texts = sorted((k1, k2) for k1, k2 in keys if k1 is not None and k2 is not None)
    return ", ".join(f"{k1}|{k2}" for k1, k2 in texts) or None


def _replace_restated(
    con: duckdb.DuckDBPyConnection, planned: list[_Planned], loaded_at: datetime
) -> list[str]:
    """Delete rows of earlier loads that this load's files restate; once per raw table."""
    lines = []
    loaded_at_sql = f"timestamp {lit(loaded_at.isoformat(sep=' '))}"
    by_index = {item.index: item for item in planned}
    specs = {item.spec.raw_table: item.spec for item in planned}
    for raw_table, spec in specs.items():
        k1, k2 = spec.period_key
        keys = (
            f"(select k1, k2, min(file_index) as file_index from {_NEW_KEYS} "
            f"where raw_table = {lit(raw_table)} group by k1, k2)"
        )
        earlier = f"{spec.qualified_table} as r"
        match = f"{k1} = k.k1 and {k2} = k.k2 and r._loaded_at <> {loaded_at_sql}"
        if spec.kind == "billing":
            # superseded rows stay superseded: a later restatement never deletes them
            match += " and r._superseded_at is null"
        affected = con.execute(
            f"select k.file_index, r._file_hash, r._loaded_at, count(*) "
            f"from {earlier} join {keys} as k on {match} group by all"
        ).fetchall()
        if not affected:
            continue
        kept = 0
        sealed = _sealed_reference_sql(con) if spec.kind == "billing" else None
        if sealed is not None:
            # Lines a sealed bill references are kept, marked superseded (SPEC §11).
            kept = con.execute(
                f"update {spec.qualified_table} as r set _superseded_at = {loaded_at_sql} "
                f"from {keys} as k where {match} and {sealed}"
            ).fetchone()[0]
            match += f" and not {sealed}"
        con.execute(f"delete from {spec.qualified_table} as r using {keys} as k where {match}")
        replaced_loads = sorted({(file_hash, at) for _, file_hash, at, _ in affected})
        for file_index, _, _, count in affected:
            by_index[file_index].result.rows_replaced += count
        for file_hash, at in replaced_loads:
            con.execute(
                "update raw.loaded_files set replaced_at = ? where file_hash = ? and loaded_at = ?",
                [loaded_at, file_hash, at],
            )
            current = " and _superseded_at is null" if spec.kind == "billing" else ""
            (remaining,) = con.execute(
                f"select count(*) from {spec.qualified_table} "
                f"where _file_hash = ? and _loaded_at = ?{current}",
                [file_hash, at],
            ).fetchone()
            if remaining == 0:
                # The whole earlier file is superseded: so are its quarantined rows.
                con.execute(
                    "delete from raw.quarantine where _file_hash = ? and _loaded_at = ?",
                    [file_hash, at],
                )
        total = sum(count for *_, count in affected)
        lines.append(
            f"replaced {total:,} rows of {len(replaced_loads)} earlier "
            f"file{'s' if len(replaced_loads) != 1 else ''} in raw.{raw_table} "
            f"({_restatement_unit(spec)})"
            + (
                f"; kept {kept:,} of them, marked superseded: a sealed bill references them"
                if kept
                else ""
            )
        )
    return lines


def _sealed_reference_sql(con: duckdb.DuckDBPyConnection) -> str | None:
    """SQL true for a raw billing row (alias r) a sealed bill references; None: no seals."""
    (exists,) = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'sealed' and table_name = 'sealed_billing_line_refs'"
    ).fetchone()
    if not exists:
        return None
    row_id = BILLING_LINE_ID_SQL.replace("_source_file", "r._source_file").replace(
        "_row_number", "r._row_number"
    )
    return f"{row_id} in (select billing_line_id from sealed.sealed_billing_line_refs)"


def _restatement_unit(spec: FormatSpec) -> str:
    if spec.kind == "billing":
        return "restated billing periods"
    if spec.kind == "usage":
        return "re-delivered report hours"
    return "new versions of the same files"


_ARROW_TYPES = {
    "varchar": pa.string(),
    "bigint": pa.int64(),
    "timestamp": pa.timestamp("us"),
}


def _record_loaded_files(
    con: duckdb.DuckDBPyConnection, planned: list[_Planned], loaded_at: datetime
) -> None:
    if not planned:
        return
    names = ", ".join(ident(name) for name, _ in LOADED_FILES_COLUMNS)
    rows = [
        (
            item.source_file,
            item.file_hash,
            item.spec.name,
            item.spec.raw_table,
            item.result.rows_loaded,
            item.result.rows_quarantined,
            item.result.period_key,
            loaded_at,
            item.result.rows_replaced,
            None,
            item.cluster_id,
        )
        for item in planned
    ]
    # One statement for all the files, from an Arrow table (executemany costs a statement per
    # file, and one VALUES list of every file's parameters seconds to bind)
    frame = pa.table(
        dict(zip((name for name, _ in LOADED_FILES_COLUMNS), zip(*rows, strict=True), strict=True)),
        schema=pa.schema(
            [(name, _ARROW_TYPES[sql_type]) for name, sql_type in LOADED_FILES_COLUMNS]
        ),
    )
    con.register("_loaded_files", frame)
    try:
        con.execute(f"insert into raw.loaded_files ({names}) select {names} from _loaded_files")
    finally:
        con.unregister("_loaded_files")
