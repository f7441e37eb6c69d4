"""The quality gate of `kubeledger build` (and `make demo`): the raw-data expectation suites,
run before any model, blocking as the Dagster landing checks do (SPEC §13, §14).

The same suites (kubeledger.quality) run on the raw rows of the build's days (every row
without --start) but those of landing files an earlier gate found clean with the same suite
(`ops.validated_files`: each file's rows are checked once, not on every build); a failure
stops the build before dbt with the file, row and value of every failing row, and is written
to `ops.expectation_results`, which data health shows per cluster and day. A clean run clears
the earlier results of those days.

The suites run in a child process (forked: it sees the configuration and modules this process
has), so that what they hold (GX's copies of each frame, pandas and GX themselves: 1.7 GiB
at 1,000 nodes, of which part stays with a process) is given back before dbt builds in this
process.
"""

from __future__ import annotations

import datetime as dt
import gc
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from kubeledger.dagster.expectation_log import record_validations
from kubeledger.dagster.ops_tables import ensure_ops_schema
from kubeledger.quality import TableValidation, validate_raw_tables
from kubeledger.quality.validate import import_great_expectations

MAX_LISTED_ROWS = 200
GATE_DUCKDB_MEMORY = "1GB"

T = TypeVar("T")


class QualityGateStopped(RuntimeError):
    """The quality gate stopped the build; nothing was built."""


class QualityGateError(QualityGateStopped):
    """Raw rows fail the expectations. `validations` hold every failure."""

    def __init__(self, message: str, validations: list[TableValidation]) -> None:
        super().__init__(message)
        self.validations = validations


class QualityGateAborted(QualityGateStopped):
    """The gate's process ended without a result (killed, out of memory)."""


def run_quality_gate(
    db_path: Path,
    first_day: dt.date | None = None,
    last_day: dt.date | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> list[TableValidation]:
    """Validate the raw tables (of [first_day, last_day], else all); raise QualityGateError."""
    validations, _ = run_quality_gate_alongside(
        db_path, first_day, last_day, lambda: None, progress=progress
    )
    return validations


def run_quality_gate_alongside(
    db_path: Path,
    first_day: dt.date | None,
    last_day: dt.date | None,
    meanwhile: Callable[[], T],
    *,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[TableValidation], T]:
    """`run_quality_gate`, with `meanwhile` done in this process while the gate's child runs
    (the build parses the dbt project: 1.5 to 5 s off its time). `meanwhile` must not open
    the warehouse, which the gate holds; whatever it does or raises, the gate runs to its end
    and its verdict comes first: a gate that fails raises, as run_quality_gate does."""
    validations, done = _in_child_process(db_path, first_day, last_day, meanwhile)
    failed = [validation for validation in validations if not validation.success]
    if progress is not None:
        rows = sum(validation.rows_checked for validation in validations)
        progress(
            f"    quality gate: {len(validations)} raw tables, {rows:,} rows checked, "
            f"{len(failed)} failing"
        )
    if failed:
        raise QualityGateError(_message(failed), validations)
    return validations, done.result()


def _validate_and_record(
    db_path: Path, first_day: dt.date | None, last_day: dt.date | None
) -> list[TableValidation]:
    with duckdb.connect(str(db_path)) as con:
        con.execute("set enable_progress_bar = false")  # the build prints its own progress
        # the rows stream through once: DuckDB's cache of the table's blocks buys nothing
        con.execute(f"set memory_limit = '{GATE_DUCKDB_MEMORY}'")
        validations = validate_raw_tables(
            con, first_day, last_day, skip_validated_files=True, load_gx=_load_gx_and_freeze
        )
        _record(con, validations, first_day, last_day)
    return validations


def _load_gx_and_freeze() -> Any:
    """GX, imported when the first rows are in (2 s, while the next rows are read), then the
    heap frozen. The suites free each frame with the cyclic collector (validate.
    _release_frame_memory), whose every pass walked the third of a million objects of pandas,
    GX and their modules: 0.18 s a pass, a pass per frame (7 s of a 1,000-node month's gate).
    Everything alive now lives as long as this process; frozen, the collector skips it and
    walks only what the suites create. (A child process's own heap: nothing is frozen in the
    caller.)"""
    global _frozen
    gx = import_great_expectations()
    if not _frozen:
        gc.collect()
        gc.freeze()
        _frozen = True
    return gx


_frozen = False


def _in_child_process(
    db_path: Path,
    first_day: dt.date | None,
    last_day: dt.date | None,
    meanwhile: Callable[[], T],
) -> tuple[list[TableValidation], Future[T]]:
    """`_validate_and_record` in a forked child process: its result (or its exception) comes
    back pickled, its memory goes back to the system when it ends. Forked, not spawned: no
    second start of Python and its imports, and the child runs the code this process runs.
    Forked before `meanwhile` starts, so the child holds nothing `meanwhile` builds; its
    outcome (value or exception) comes back as a done future."""
    context = multiprocessing.get_context("fork")
    done: Future[T] = Future()
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        gate = pool.submit(_validate_and_record, db_path, first_day, last_day)
        try:
            done.set_result(meanwhile())
        except Exception as exc:  # the gate's verdict first
            done.set_exception(exc)
        try:
            return gate.result(), done
        except BrokenProcessPool as exc:
            raise QualityGateAborted(
                "the quality gate's process ended without a result (killed, or out of "
                "memory?); nothing was built"
            ) from exc


def _record(
    con: duckdb.DuckDBPyConnection,
    validations: list[TableValidation],
    first_day: dt.date | None,
    last_day: dt.date | None,
) -> None:
    if first_day is None or last_day is None:
        # A build of every day: what fails now replaces every earlier result of these tables.
        ensure_ops_schema(con)
        for validation in validations:
            con.execute(
                "delete from ops.expectation_results where raw_table = ?", [validation.raw_table]
            )
        days = [
            row.day
            for validation in validations
            for failure in validation.failures
            for row in failure.rows
            if row.day is not None
        ]
        today = dt.datetime.now(dt.UTC).date()
        first_day, last_day = (min(days), max(days)) if days else (today, today)
    record_validations(con, validations, first_day, last_day, run_id=None)


def _message(failed: list[TableValidation]) -> str:
    lines = [
        "the raw data fails its expectations, so nothing was built (the same suites block "
        "the Dagster landing checks):"
    ]
    listed = 0
    total = 0
    for validation in failed:
        for failure in validation.failures:
            count = f"{failure.unexpected_count} rows" if failure.rows else "the table"
            lines.append(f"  {validation.raw_table}: {failure.description}: {count}")
            if not failure.rows and failure.observed:
                lines.append(f"    observed: {failure.observed}")
            for row in failure.rows:
                total += 1
                if listed < MAX_LISTED_ROWS:
                    lines.append(f"    {row.address()}")
                    listed += 1
    if total > listed:
        lines.append(f"  ... and {total - listed} more rows (all in ops.expectation_results)")
    lines.append(
        "Fix the export or remove those rows (a restated file replaces them), then build "
        "again; data health (fct_data_health_daily) counts them per cluster and day."
    )
    return "\n".join(lines)
