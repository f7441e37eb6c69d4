"""Landing files as the sensor and the billing re-read see them: fingerprint, kind and days.

A file's format is recognised the way the loader does it (by its header). Its days:
- usage reports (koku): the day folder they sit in (`usage/<cluster>/<YYYY-MM-DD>/`), else
  the range of their `interval_start`;
- billing exports: the range of the charge period starts inside, read with DuckDB;
- supplementary CSVs (nodes, owners, load balancers, rate card): no days of their own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from kubeledger.load import FormatSpec, LoadError
from kubeledger.load.csv_reader import csv_source
from kubeledger.load.detect import is_manifest, match_format, sniff
from kubeledger.load.json_reader import json_source
from kubeledger.load.parquet_reader import parquet_source
from kubeledger.load.sql import parse_timestamp_sql
from kubeledger.quality.tables import RAW_TABLES_BY_NAME


@dataclass(frozen=True)
class LandingFile:
    source_file: str
    kind: str  # usage | billing | supplementary | ignored | unreadable
    raw_table: str | None = None
    first_day: dt.date | None = None
    last_day: dt.date | None = None
    problem: str | None = None

    def days(self) -> list[dt.date]:
        if self.first_day is None or self.last_day is None:
            return []
        count = (self.last_day - self.first_day).days + 1
        return [self.first_day + dt.timedelta(days=n) for n in range(count)]


def walk(landing: Path) -> Iterator[tuple[str, Path]]:
    """(path relative to the landing folder, path) of every data file, as the loader sees it."""
    if not landing.is_dir():
        return
    for path in sorted(landing.rglob("*")):
        relative = path.relative_to(landing)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        if is_manifest(path):
            continue
        yield relative.as_posix(), path


def fingerprint(path: Path) -> str:
    """What tells a changed file from the one seen before: modification time and size."""
    stat = path.stat()
    return f"{stat.st_mtime_ns}:{stat.st_size}"


def _day_folder(path: Path) -> dt.date | None:
    try:
        return dt.date.fromisoformat(path.parent.name)
    except ValueError:
        return None


def _day_range(
    con: duckdb.DuckDBPyConnection, path: Path, sniffed, spec: FormatSpec, column: str
) -> tuple[dt.date | None, dt.date | None]:
    if sniffed.family == "parquet":
        source = parquet_source(con, path, flatten=spec.flatten_structs)
    elif sniffed.family == "json":
        source = json_source(path, sniffed, flatten=spec.flatten_structs)
    else:
        source = csv_source(path, sniffed)
    # the day column, else an older schema's name for it (Azure `UsageDateTime` for `Date`)
    names = [column.lower()] + [a.lower() for a, target in spec.aliases if target == column]
    by_name = {c.name.lower(): c.expr for c in reversed(source.columns)}
    exprs = [by_name[name] for name in names if name in by_name]
    if not exprs:
        return None, None
    day = f"cast(timezone('UTC', {parse_timestamp_sql(exprs[0])}) as date)"
    return con.execute(f"select min({day}), max({day}) from {source.relation}").fetchone()


def describe(landing: Path, source_file: str) -> LandingFile:
    """Kind and day range of one landing file (never raises: problems are described)."""
    path = landing / source_file
    con = duckdb.connect()
    try:
        con.execute("set timezone = 'UTC'")
        sniffed = sniff(con, path, source_file)
        spec = match_format(sniffed.header, source_file)
        if not isinstance(spec, FormatSpec):
            return LandingFile(source_file, "ignored")
        if spec.kind == "supplementary":
            return LandingFile(source_file, "supplementary", spec.raw_table)
        if spec.kind == "usage" and (day := _day_folder(path)) is not None:
            return LandingFile(source_file, "usage", spec.raw_table, day, day)
        column = RAW_TABLES_BY_NAME[spec.raw_table].day_column
        first, last = _day_range(con, path, sniffed, spec, column) if column else (None, None)
        return LandingFile(source_file, spec.kind, spec.raw_table, first, last)
    except (LoadError, duckdb.Error, OSError) as exc:
        return LandingFile(source_file, "unreadable", problem=str(exc).splitlines()[0])
    finally:
        con.close()
