"""The generator's working state: one DuckDB connection holding the fleet tables, and
the bookkeeping of what was written."""

from __future__ import annotations

import datetime as dt
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from kubeledger.generate.fleet import Fleet

# A number as an export writes it: fixed point, no exponent, no trailing zeros.
NUMBER_MACRO = """
create or replace macro fmtnum(x) as
    case
        when x is null then null
        when abs(x) < 0.00000000005 then '0'
        else regexp_replace(printf('%.10f', x), '\\.?0+$', '')
    end;
-- A UTC timestamp written as the wall time of `zone` with its offset (2026-10-01T17:00:00-07:00):
-- the same instant, another spelling.
create or replace macro iso_in_zone(ts, zone) as
    strftime(timezone(zone, ts at time zone 'UTC'), '%Y-%m-%dT%H:%M:%S')
    || case when timezone(zone, ts at time zone 'UTC') < ts then '-' else '+' end
    || lpad((abs(datediff('minute', ts, timezone(zone, ts at time zone 'UTC'))) // 60)::varchar,
            2, '0')
    || ':'
    || lpad((abs(datediff('minute', ts, timezone(zone, ts at time zone 'UTC'))) % 60)::varchar,
            2, '0')
"""


@dataclass
class Context:
    fleet: Fleet
    out_dir: Path
    con: duckdb.DuckDBPyConnection
    progress: Callable[[str], None]
    files: Counter = field(default_factory=Counter)
    rows: Counter = field(default_factory=Counter)
    bytes: Counter = field(default_factory=Counter)
    workers: int = 1
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _cursors: list = field(default_factory=list)
    overcommitted: Counter = field(default_factory=Counter)  # node-hours, by resource
    subdir: str = ""  # a fleet's own folder under landing/ in a multi-fleet run
    late_files: list = field(default_factory=list)  # (delivered on, landing root, path)

    @property
    def landing(self) -> Path:
        root = self.out_dir / "landing"
        return root / self.subdir if self.subdir else root

    def late_root(self, delivered: dt.date) -> Path:
        """The landing folder of a later delivery (loaded after the first one)."""
        root = self.out_dir / "late" / delivered.isoformat()
        return root / self.subdir if self.subdir else root

    @property
    def seed(self) -> int:
        return self.fleet.params.seed

    def table(self, name: str, rows: list[dict], schema: pa.Schema) -> None:
        """Materialize a small Python-built table in DuckDB."""
        arrow = pa.Table.from_pylist(rows, schema=schema)
        self.con.register("_incoming", arrow)
        self.con.execute(f"create or replace table {name} as select * from _incoming")
        self.con.unregister("_incoming")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's connection to the shared in-memory database."""
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            cursor = self._local.cursor = self.con.cursor()
            with self._lock:
                self._cursors.append(cursor)
        return cursor

    def copy(self, query: str, path: Path, kind: str, options: str = "format csv, header") -> int:
        """COPY a query to a file and count it under `kind` in the summary."""
        path.parent.mkdir(parents=True, exist_ok=True)
        target = str(path).replace("'", "''")
        count = self.cursor().execute(f"copy ({query}) to '{target}' ({options})").fetchone()[0]
        self.note(path, kind, count)
        return count

    def copy_by_day(
        self, query: str, scratch: Path, kind: str, options: str, paths: dict[int, Path]
    ) -> int:
        """COPY a query with a `report_day` column to one file per day: `paths[day]` gets
        that day's rows in the query's order (DuckDB's partitioned write, single-threaded,
        keeps it), or only the header when the day has none."""
        scratch.parent.mkdir(parents=True, exist_ok=True)
        target = str(scratch).replace("'", "''")
        count = (
            self.cursor()
            .execute(f"copy ({query}) to '{target}' ({options}, partition_by (report_day))")
            .fetchone()[0]
        )
        for day, path in paths.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            written = sorted((scratch / f"report_day={day}").glob("*"))
            if len(written) > 1:
                raise RuntimeError(f"{kind}: {len(written)} files for day {day}, expected one")
            if written:
                written[0].replace(path)
                self.note(path, kind, 0)  # the rows are counted once, below
            else:
                self.copy(
                    f"select * exclude (report_day) from ({query}) limit 0", path, kind, options
                )
        with self._lock:
            self.rows[kind] += count
        return count

    def note(self, path: Path, kind: str, rows: int) -> None:
        size = path.stat().st_size
        with self._lock:
            self.files[kind] += 1
            self.rows[kind] += rows
            self.bytes[kind] += size

    def run_parallel(self, jobs: list[Callable[[], None]], what: str) -> None:
        """Run independent file writers on `workers` threads, one DuckDB cursor each, and
        report progress every tenth of the way.

        DuckDB itself runs single-threaded (see `connect`): one thread per file keeps each
        file's row order deterministic and is faster than DuckDB's order-preserving
        parallel CSV writer."""
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            futures = [pool.submit(job) for job in jobs]
            reported = 0
            for done, future in enumerate(futures, start=1):
                future.result()
                if done * 10 // len(futures) > reported or done == len(futures):
                    reported = done * 10 // len(futures)
                    self.progress(f"{what}: {done}/{len(futures)}")

    def close(self) -> None:
        for cursor in self._cursors:
            cursor.close()
        self.con.close()


def memory_cap_mb(nodes: int) -> int:
    """The generator's DuckDB memory cap for a fleet of `nodes`: 2 MB a node, at least 2 GB and
    at most 6 GB. Uncapped, DuckDB keeps up to 80% of RAM (a 1,000-node month peaked at 5.3 GiB;
    capped at 2 GB, the same files byte for byte in 2.2 GiB); a 10,000-node month ran out of
    memory in its partitioned writes at 2 GB, after spilling 21 GB, and peaked at 10.7 GiB at
    20 GB; at 6 GB it peaks at 6.9 GiB in the same 610 s (2026-12-07)."""
    return min(6144, max(2048, 2 * nodes))


def connect(spill_dir: Path | None = None, memory_mb: int = 2048) -> duckdb.DuckDBPyConnection:
    """The generator's in-memory DuckDB; past its memory cap it spills into `spill_dir` (the
    fleet's output folder, not the working directory; the writer removes it when done)."""
    con = duckdb.connect()
    if spill_dir is not None:
        con.execute(f"set temp_directory = '{str(spill_dir).replace(chr(39), chr(39) * 2)}'")
    con.execute("set threads = 1")
    con.execute(f"set memory_limit = '{int(memory_mb)}MB'")
    con.execute("set preserve_insertion_order = true")
    con.execute("set enable_progress_bar = false")
    con.execute(NUMBER_MACRO)
    return con


def sql_str(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def union_lines(columns: dict[str, str], parts: list[tuple[dict[str, str], str]]) -> str:
    """`union all` of row kinds that each set some of `columns` (name -> SQL type); the
    rest are typed NULLs. Each part is ({column: expression}, "from ... where ...")."""
    selects = []
    for values, source in parts:
        unknown = set(values) - set(columns)
        if unknown:
            raise ValueError(f"unknown line columns: {sorted(unknown)}")
        exprs = [
            f"cast({values[name]} as {kind}) as {name}"
            if name in values
            else f"cast(null as {kind}) as {name}"
            for name, kind in columns.items()
        ]
        selects.append("select " + ", ".join(exprs) + "\n" + source)
    return "\nunion all\n".join(selects)
