"""Run the suites on the raw tables' rows of a day range, offline, with GX's pandas source.

A rule on one text column (not null, a pattern, a set of values) looks at one value at a time,
so it runs once per table on the column's distinct values, which DuckDB finds in the
warehouse; the rows holding a failing value are then read back with their address. Every
other rule (ranges and comparisons on the typed columns the suite derives, `<column>__value`,
`<column>__at`) runs on the rows, read from DuckDB into pandas frames a chunk at a time: the
columns those rules read and each row's address (`_source_file`, `_row_number`, `_cluster`,
`_day`). A failed expectation comes back with every row it failed on, so data health can say
which rows, per cluster and day.

With `skip_validated_files` (the build's quality gate) a landing file whose every row already
held every expectation of its suite is not checked again: `ops.validated_files` records each
clean file by content hash and suite fingerprint (the suite's expectations, typed columns and
the GX version), so a changed file, a changed suite or a new GX checks it anew, and a file with
a failing row is checked on every run until it is replaced. Every row-level expectation of the
suites looks at one row only, so a row's outcome depends on nothing but its file's content;
the table-level check (required columns) runs on every run, and the one cross-row check (one
currency per billing account, in SQL) reads the whole table (the days checked) on every run.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import logging
import os
import queue
import threading
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb

from kubeledger.load.sql import ident, lit
from kubeledger.quality.suites import SUITES, ExpectationSpec, TableSuite

ROW_ADDRESS = ("_source_file", "_row_number", "_cluster", "_day")


@dataclass(frozen=True)
class FailedRow:
    source_file: str | None
    row_number: int | None
    cluster_id: str | None
    day: dt.date | None
    value: str | None = None  # the failing value(s), `column=value`

    def address(self) -> str:
        text = f"{self.source_file} row {self.row_number}"
        return f"{text} ({self.value})" if self.value else text


@dataclass
class ExpectationFailure:
    """One expectation that did not hold, with the rows it failed on (none: table level)."""

    expectation: str
    column: str | None
    description: str
    unexpected_count: int
    rows: list[FailedRow] = field(default_factory=list)
    observed: str | None = None


@dataclass
class TableValidation:
    raw_table: str
    suite_name: str
    rows_checked: int
    expectations_evaluated: int
    failures: list[ExpectationFailure] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        if self.success:
            return (
                f"{self.raw_table}: {self.expectations_evaluated} expectations hold on "
                f"{self.rows_checked} rows"
            )
        parts = []
        for failure in self.failures:
            where = ""
            if failure.rows:
                first = failure.rows[0]
                where = f" (first: {first.source_file} row {first.row_number})"
            count = f"{failure.unexpected_count} rows" if failure.rows else "table"
            parts.append(f"{failure.description}: {count}{where}")
        return f"{self.raw_table}: " + "; ".join(parts)


VALIDATED_FILES = "ops.validated_files"


def suite_fingerprint(suite: TableSuite) -> str:
    """What a clean file's record depends on: the suite and the GX that ran it."""
    from importlib.metadata import version

    described = repr((suite.name, suite.expectations, sorted(suite.derived.items())))
    return hashlib.sha256(
        f"{described}|great_expectations {version('great_expectations')}".encode()
    ).hexdigest()


def frame_sql(
    suite: TableSuite,
    columns: Iterable[str],
    first_day: dt.date | None,
    last_day: dt.date | None,
    *,
    validated: Collection[str] | None = None,
) -> str:
    """The query giving the frame a suite validates: raw columns, typed columns, row address;
    with `validated` (the hashes of the files validated clean with the suite), only the rows of
    the other files, and each row's `_file_hash`."""
    table = suite.table
    raw = ", ".join(ident(name) for name in columns)
    derived = "".join(f",\n    {sql} as {ident(name)}" for name, sql in suite.derived.items())
    where = "true"
    if table.day_column is not None and first_day is not None and last_day is not None:
        # dates as dates, whatever the caller passed: nothing but YYYY-MM-DD reaches the SQL
        first, last = (dt.date.fromisoformat(str(day)).isoformat() for day in (first_day, last_day))
        where = f"{table.day_sql()} between date '{first}' and date '{last}'"
    file_hash = ""
    if validated is not None:
        file_hash = "_file_hash, "
        if validated:
            # a list, not a subquery: DuckDB streams a query with a constant list, where the
            # subquery had it buffer the month's rows (4.6 GB at a thousand nodes)
            hashes = ", ".join(lit(value) for value in sorted(validated))
            where += f" and _file_hash not in ({hashes})"
    return (
        "select\n"
        f"    _source_file, _row_number, {file_hash}{table.cluster_sql()} as _cluster,\n"
        f"    {table.day_sql()} as _day,\n"
        f"    {raw}{derived}\n"
        f"from {table.qualified}\n"
        f"where {where}"
    )


def _table_columns(con: duckdb.DuckDBPyConnection, suite: TableSuite) -> list[str] | None:
    known = {name.lower() for name in suite.table.spec.columns}
    rows = con.execute(
        "select column_name from information_schema.columns "
        "where table_schema = 'raw' and table_name = ? order by ordinal_position",
        [suite.table.name],
    ).fetchall()
    if not rows:
        return None
    return [name for (name,) in rows if name.lower() in known]


def import_great_expectations() -> Any:
    """Great Expectations, imported quietly and without analytics (about 4 s the first time)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    # GX's notes (its registry at import, its temporary docs folder) are not the user's
    # business on the console; one of its modules sets its own logger to INFO when imported
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    import great_expectations as gx
    import great_expectations.data_context.types.base  # noqa: F401  (the module that does)

    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)
    return gx


def _gx_context(load_gx: Callable[[], Any] = import_great_expectations) -> Any:
    gx = load_gx()
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.execution_engine import pandas_execution_engine

    # GX fingerprints each batch's frame below this size by hashing every value, a batch
    # marker nothing here reads: seconds per million rows, for each narrow frame
    pandas_execution_engine.HASH_THRESHOLD = 0
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


def _text(value: Any) -> str | None:
    """A text cell of the frame: a missing one is NaN in pandas' `str` columns."""
    return value if isinstance(value, str) else None


def _failed_rows(result: dict[str, Any]) -> list[FailedRow]:
    rows = []
    for item in result.get("unexpected_index_list") or []:
        if not isinstance(item, dict):
            continue
        day = item.get("_day")
        if day is not None and hasattr(day, "date"):
            day = day.date()
        number = item.get("_row_number")
        values = [f"{key}={value}" for key, value in item.items() if key not in ROW_ADDRESS]
        rows.append(
            FailedRow(
                source_file=_text(item.get("_source_file")),
                row_number=int(number) if number is not None else None,
                cluster_id=_text(item.get("_cluster")),
                day=day if isinstance(day, dt.date) else None,
                value=", ".join(values) or None,
            )
        )
    return rows


def _expectation_columns(spec: ExpectationSpec) -> tuple[str, ...]:
    """The frame columns one expectation reads (none: a table-level expectation)."""
    return tuple(
        spec.kwargs[key] for key in ("column", "column_A", "column_B") if key in spec.kwargs
    )


@dataclass
class _Groups:
    """A suite's expectations (their indexes) by how they run: the table-level ones, those on
    one text column (on its distinct values), and the others on the rows, by their columns."""

    table: list[int] = field(default_factory=list)
    distinct: dict[str, list[int]] = field(default_factory=dict)
    rows: dict[tuple[str, ...], list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, suite: TableSuite, relation: duckdb.DuckDBPyRelation) -> _Groups:
        text = {
            name
            for name, kind in zip(relation.columns, relation.types, strict=True)
            if str(kind) == "VARCHAR"
        }
        groups = cls()
        for index, spec in enumerate(suite.expectations):
            columns = _expectation_columns(spec)
            if not columns:
                groups.table.append(index)
            elif len(columns) == 1 and columns[0] in text:
                groups.distinct.setdefault(columns[0], []).append(index)
            else:
                groups.rows.setdefault(columns, []).append(index)
        return groups

    def row_columns(self, present: list[str]) -> list[str]:
        """The columns the rules on rows read, of those the table has."""
        wanted = dict.fromkeys(column for columns in self.rows for column in columns)
        return [column for column in wanted if column in present]


def _in_suite_order(
    suite: TableSuite, failures: Iterable[ExpectationFailure]
) -> list[ExpectationFailure]:
    """The failures in the order the suite lists its expectations (GX keeps no order, and the
    rules on rows, the table and distinct values run apart)."""
    order = {
        (spec.gx_type, spec.column, spec.description): index
        for index, spec in reversed(list(enumerate(suite.expectations)))
    }
    return sorted(
        failures,
        key=lambda failure: order[(failure.expectation, failure.column, failure.description)],
    )


def _batch_definition(context: Any, suite: TableSuite) -> Any:
    source = context.data_sources.add_or_update_pandas(name="kubeledger_raw")
    asset = source.add_dataframe_asset(name=suite.table.name)
    return asset.add_batch_definition_whole_dataframe("rows_checked")


def _validate_group(
    definition: Any, suite: TableSuite, indexes: list[int], frame: Any, index_columns: list[str]
) -> list[Any]:
    """GX's results of the expectations `indexes` of the suite on `frame`."""
    import great_expectations as gx

    gx_suite = gx.ExpectationSuite(name=suite.name)
    for index in indexes:
        gx_suite.add_expectation(suite.expectations[index].build(index))
    with warnings.catch_warnings():
        # pandas' note on a regex with groups (the suites' patterns only match)
        warnings.filterwarnings("ignore", "This pattern is interpreted as a regular")
        result = definition.get_batch(batch_parameters={"dataframe": frame}).validate(
            gx_suite,
            result_format={
                "result_format": "COMPLETE",
                "unexpected_index_column_names": index_columns,
            },
        )
    return list(result.results)


def _validate_rows(
    definition: Any, suite: TableSuite, groups: dict[tuple[str, ...], list[int]], frame: Any
) -> list[ExpectationFailure]:
    """Validate one chunk of the rows with the groups of expectations that read rows, each group
    on a frame of only its columns and the row address: GX copies the frame it filters once per
    expectation, and a copy of every column costs far more than the check itself."""
    present = set(frame.columns) - set(ROW_ADDRESS)
    outcomes = []
    for columns, indexes in groups.items():
        # a column the table lacks is left out, and GX reports the expectation on it failed
        narrow = frame[[*ROW_ADDRESS, *(c for c in dict.fromkeys(columns) if c in present)]]
        results = _validate_group(definition, suite, indexes, narrow, list(ROW_ADDRESS))
        outcomes.extend((outcome, None) for outcome in results)
    return _failures(suite, outcomes)


def _validate_table(
    definition: Any, suite: TableSuite, indexes: list[int], columns: list[str]
) -> list[ExpectationFailure]:
    """The table-level expectations (the required columns): on every column, no row."""
    import pandas as pd

    frame = pd.DataFrame({name: pd.Series([], dtype=object) for name in columns})
    results = _validate_group(definition, suite, indexes, frame, list(ROW_ADDRESS))
    return _failures(suite, [(outcome, None) for outcome in results])


def _distinct_values(
    con: duckdb.DuckDBPyConnection, sql: str, columns: list[str]
) -> Iterator[tuple[str, Any]]:
    """Each column's distinct values over the frame's rows, as a pandas frame (`_to_pandas`)."""
    for column in columns:
        table = con.sql(f"select distinct {ident(column)} from ({sql}) as frame_").to_arrow_table()
        yield column, _to_pandas(table)


def _validate_distinct(
    con: duckdb.DuckDBPyConnection,
    definition: Any,
    suite: TableSuite,
    sql: str,
    column: str,
    indexes: list[int],
    distinct: Any,
) -> list[ExpectationFailure]:
    """Validate a group of expectations on one text column on the column's distinct values
    over every row checked (null once, if any row has none), and list the rows holding the
    values GX found unexpected, in the rows' order, as GX itself lists them (the value, then
    the row address).

    Every expectation on one column looks at one value at a time (not null, a pattern, a set),
    so a value fails on every row that holds it, and on distinct values GX's regex runs once
    per value instead of once per row: a month's timestamps are a few hundred texts in a
    million rows, most number columns a few dozen. DuckDB finds the distinct values (and the
    rows of a failing one) in the warehouse, so the text columns are never copied into pandas
    and GX runs once per table, not once per chunk of rows."""
    import numpy as np

    distinct.insert(0, _VALUE_ID, np.arange(len(distinct)))

    def rows_of(details: dict[str, Any]) -> list[dict[str, Any]]:
        ids = [item[_VALUE_ID] for item in details["unexpected_index_list"]]
        failing = distinct.loc[distinct[_VALUE_ID].isin(ids), column]
        values = [value for value in failing if isinstance(value, str)]
        null = f" or frame_.{ident(column)} is null" if len(values) < len(failing) else ""
        address = ", ".join(ident(name) for name in ROW_ADDRESS)
        rows = con.sql(
            f"select {ident(column)}, {address} from ({sql}) as frame_ "
            f"where list_contains(?, frame_.{ident(column)}){null}",
            params=[values],
        ).to_arrow_table()
        return _to_pandas(rows).to_dict("records")

    results = _validate_group(definition, suite, indexes, distinct, [_VALUE_ID])
    return _failures(suite, [(outcome, rows_of) for outcome in results])


def _failures(
    suite: TableSuite,
    outcomes: list[tuple[Any, Callable[[dict[str, Any]], list[dict[str, Any]]] | None]],
) -> list[ExpectationFailure]:
    """The failed expectations among GX's outcomes (in GX's order, not the suite's: the table's
    failures are put in the suite's order once, by `_in_suite_order`)."""
    failures = []
    for outcome, rows_of in outcomes:
        if outcome.success:
            continue
        spec = suite.expectations[outcome.expectation_config.meta["spec_index"]]
        details = outcome.result or {}
        if rows_of is not None and details.get("unexpected_index_list"):
            # the failing values' rows, and how many: GX counted values, not rows
            listed = rows_of(details)
            details = {**details, "unexpected_index_list": listed, "unexpected_count": len(listed)}
        rows = _failed_rows(details)
        observed = None
        if outcome.exception_info and outcome.exception_info.get("raised_exception"):
            observed = str(outcome.exception_info.get("exception_message"))
        elif not rows:
            observed = str(details.get("details") or details.get("observed_value"))
        failures.append(
            ExpectationFailure(
                expectation=spec.gx_type,
                column=spec.column,
                description=spec.description,
                unexpected_count=int(details.get("unexpected_count") or len(rows)),
                rows=rows,
                observed=observed,
            )
        )
    return failures


_VALUE_ID = "_value_id"


def validate_raw_tables(
    con: duckdb.DuckDBPyConnection,
    first_day: dt.date | None = None,
    last_day: dt.date | None = None,
    *,
    tables: Iterable[str] | None = None,
    skip_validated_files: bool = False,
    load_gx: Callable[[], Any] = import_great_expectations,
) -> list[TableValidation]:
    """Validate each raw table's rows of [first_day, last_day] (all rows when not given); with
    `skip_validated_files`, leave out the files validated clean before and record the files
    found clean now (`ops.validated_files`). `load_gx` imports GX, when the first rows are read
    (the next ones are read meanwhile)."""
    wanted = set(tables) if tables is not None else None
    if skip_validated_files:
        from kubeledger.dagster.ops_tables import ensure_ops_schema

        ensure_ops_schema(con)
    context = None
    results = []
    for suite in SUITES:
        if wanted is not None and suite.table.name not in wanted:
            continue
        columns = _table_columns(con, suite)
        if columns is None:
            continue
        fingerprint = suite_fingerprint(suite) if skip_validated_files else None
        validated = _validated_hashes(con, suite, fingerprint) if fingerprint else None
        sql = frame_sql(suite, columns, first_day, last_day, validated=validated)
        validation = TableValidation(
            raw_table=suite.table.name,
            suite_name=suite.name,
            rows_checked=0,
            expectations_evaluated=0,
        )
        relation = con.sql(sql)
        groups = _Groups.of(suite, relation)
        read = list(ROW_ADDRESS)
        read += ["_file_hash"] if fingerprint is not None else []
        read += [name for name in groups.row_columns(relation.columns) if name not in read]
        rows_sql = f"select {', '.join(ident(name) for name in read)} from ({sql}) as frame_"
        failures: dict[tuple[str, str | None, str], ExpectationFailure] = {}
        files = []
        definition = None
        # The rows in chunks of CHUNK_ROWS, so that memory does not grow with the table (a
        # month of a thousand nodes is tens of millions of rows); every row-level expectation
        # looks at one row, so the chunks' failures add up to the whole frame's.
        stream = con.cursor()
        frames = _read_ahead(_frames(stream.sql(rows_sql)))
        try:
            for frame in frames:
                validation.rows_checked += len(frame)
                context = context or _gx_context(load_gx)
                definition = definition or _batch_definition(context, suite)
                for failure in _validate_rows(definition, suite, groups.rows, frame):
                    _merge(failures, failure)
                if fingerprint is not None:
                    files.append(frame[["_source_file", "_file_hash"]].drop_duplicates())
                del frame
                _release_frame_memory()
        finally:
            frames.close()  # its reading thread is done with the cursor before it closes
            stream.close()
            _release_table_memory()
        if validation.rows_checked:
            found = _validate_table(definition, suite, groups.table, relation.columns)
            # each column's distinct values read (by DuckDB, on a cursor of their own) while
            # GX validates the column before
            reader = con.cursor()
            values = _read_ahead(_distinct_values(reader, sql, list(groups.distinct)))
            try:
                for column, distinct in values:
                    indexes = groups.distinct[column]
                    found += _validate_distinct(
                        con, definition, suite, sql, column, indexes, distinct
                    )
            finally:
                values.close()
                reader.close()
            for failure in found:
                _merge(failures, failure)
        # one currency per billing account: across rows and files, and depending on the
        # configuration's currency and exchange rates, so over every line, on every run
        # (whichever files the expectations skipped)
        currency = _currency_failures(con, suite, columns, first_day, last_day)
        if validation.rows_checked or currency:
            validation.expectations_evaluated = len(suite.expectations)
            validation.failures = _in_suite_order(suite, failures.values()) + currency
        if validation.rows_checked and fingerprint is not None:
            _record_clean_files(con, suite, fingerprint, files, validation.failures)
        results.append(validation)
    return results


# The row address's text columns, as pandas categoricals: GX copies the rows of the address
# and the checked columns once or twice per expectation (its null filter), and copying a
# million long file names took half of the gate's time.
CATEGORICAL = ("_source_file", "_cluster", "_file_hash")


def _validated_hashes(
    con: duckdb.DuckDBPyConnection, suite: TableSuite, fingerprint: str
) -> list[str]:
    """The content hashes of the table's files validated clean with this suite."""
    rows = con.execute(
        f"select distinct file_hash from {VALIDATED_FILES} "
        "where raw_table = ? and suite_fingerprint = ?",
        [suite.table.name, fingerprint],
    ).fetchall()
    return [value for (value,) in rows]


# Rows of a frame validated at once (at least; whole Arrow batches).
CHUNK_ROWS = 1_048_576


def _release_frame_memory() -> None:
    """Give a validated frame's memory back to the system before the next one is read.

    GX leaves each frame's copies in reference cycles, freed only by the cyclic collector, and
    glibc keeps what pandas and numpy free in its heap rather than returning it: without both
    steps a month of a thousand nodes (16 frames) held 15.6 GB at the end of the gate, with
    them 2.3 GB (the first frame's peak). `malloc_trim` is glibc's; elsewhere only the
    collector runs."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _release_table_memory() -> None:
    """After a table: also hand back what Arrow's pool keeps for reuse (a quarter of a
    gigabyte after a month's pod usage), which the build's dbt run would otherwise sit on."""
    import pyarrow as pa

    _release_frame_memory()
    pa.default_memory_pool().release_unused()


def _glibc() -> Any:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _glibc()


def _to_pandas(table: Any) -> Any:
    """An Arrow table as a pandas frame: text as pandas' Arrow-backed `str` (missing: NaN),
    dates as datetimes, the row address's text columns as categoricals."""
    import pandas as pd
    import pyarrow as pa

    text = pd.StringDtype("pyarrow", na_value=float("nan"))
    types = {pa.string(): text, pa.large_string(): text}
    for name in CATEGORICAL:
        # a few distinct values, copied by each expectation's filter: codes copy fast
        if name in table.column_names:
            position = table.column_names.index(name)
            table = table.set_column(position, name, table[name].dictionary_encode())
    return table.to_pandas(types_mapper=types.get, date_as_object=False)


def _frames(query: duckdb.DuckDBPyRelation) -> Iterator[Any]:
    """The query's rows as pandas frames (`_to_pandas`) of about CHUNK_ROWS rows, streamed
    through Arrow (half the time of DuckDB's own pandas conversion; a relation's reader makes
    no extra copy of the rows, where an executed cursor's would)."""
    import pyarrow as pa

    batches: list[Any] = []
    rows = 0
    for batch in query.to_arrow_reader(CHUNK_ROWS):
        batches.append(batch)
        rows += batch.num_rows
        if rows >= CHUNK_ROWS:
            yield _to_pandas(pa.Table.from_batches(batches))
            batches, rows = [], 0
    if rows:
        yield _to_pandas(pa.Table.from_batches(batches))


_READ_AHEAD_FRAMES = 1  # frames read and waiting while one is validated
_DONE = object()


def _read_ahead(frames: Iterator[Any]) -> Iterator[Any]:
    """The frames of `frames`, the next one read in a thread while the caller validates this
    one: DuckDB's scan and Arrow's conversion to pandas let go of the GIL, so they run on the
    second core while GX runs on the first (a month of a thousand nodes: 4.8 s of reading
    beside 12 s of GX). Memory stays bounded: at most one frame waiting and one being read.
    A failure in the reading thread is raised here; when the caller stops early the thread
    stops after the frame it is reading."""
    waiting: queue.Queue[Any] = queue.Queue(maxsize=_READ_AHEAD_FRAMES)
    stop = threading.Event()

    def read() -> None:
        try:
            for frame in frames:
                while not stop.is_set():
                    try:
                        waiting.put(frame, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                del frame
                if stop.is_set():
                    return
            waiting.put(_DONE)
        except BaseException as exc:  # raised again in the caller's thread
            waiting.put(exc)

    reader = threading.Thread(target=read, name="kubeledger-gate-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = waiting.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            del item
    finally:
        stop.set()
        while reader.is_alive():
            try:  # make room, so that a reader waiting to put sees the stop
                waiting.get(timeout=0.1)
            except queue.Empty:
                pass
        reader.join()


def _merge(
    failures: dict[tuple[str, str | None, str], ExpectationFailure], failure: ExpectationFailure
) -> None:
    """Add one chunk's failure of an expectation to the failures of the chunks before it."""
    key = (failure.expectation, failure.column, failure.description)
    earlier = failures.get(key)
    if earlier is None:
        failures[key] = failure
    elif failure.rows:
        earlier.unexpected_count += failure.unexpected_count
        earlier.rows.extend(failure.rows)


def _record_clean_files(
    con: duckdb.DuckDBPyConnection,
    suite: TableSuite,
    fingerprint: str,
    chunks: list[Any],
    failures: list[ExpectationFailure],
) -> None:
    """Record the frame's files (`_source_file`, `_file_hash` of each chunk) none of whose
    rows failed (none when the table failed)."""
    if any(not failure.rows for failure in failures):
        return
    import pandas as pd

    failing = {row.source_file for failure in failures for row in failure.rows}
    files = pd.concat(chunks).drop_duplicates()
    clean = files[~files["_source_file"].isin(failing) & files["_file_hash"].notna()]
    if len(clean):
        # one statement for thousands of files (executemany is a statement per row)
        con.register("_clean_files", clean)
        try:
            con.execute(
                f"insert into {VALIDATED_FILES} "
                "(raw_table, file_hash, suite_fingerprint, source_file, validated_at) "
                "select ?, _file_hash, ?, _source_file, current_timestamp from _clean_files",
                [suite.table.name, fingerprint],
            )
        finally:
            con.unregister("_clean_files")


# A billing table's account and currency (SPEC §3.3: a billing account has one currency).
ACCOUNT_CURRENCY: dict[str, tuple[str, str]] = {
    "aws_cur_legacy": ('"bill/PayerAccountId"', '"lineItem/CurrencyCode"'),
    "aws_cur2": ("bill_payer_account_id", "line_item_currency_code"),
    "gcp_billing_export": ("billing_account_id", "currency"),
    "azure_cost_details": (
        "coalesce(nullif(trim(BillingAccountId), ''), SubscriptionId)",
        "coalesce(nullif(trim(BillingCurrencyCode), ''), BillingCurrency)",
    ),
    "focus_billing": ("BillingAccountId", "BillingCurrency"),
}


def _config_currency(con: duckdb.DuckDBPyConnection) -> tuple[str | None, bool]:
    """The billing currency of kubeledger.yml and whether `config.exchange_rates` exists, from
    the config tables written before the gate (none yet: (None, False))."""
    tables = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'config'"
        ).fetchall()
    }
    billing = None
    if "settings" in tables:
        found = con.execute("select max(upper(trim(currency))) from config.settings").fetchone()
        billing = found[0] if found else None
    return billing, "exchange_rates" in tables


def _currency_failures(
    con: duckdb.DuckDBPyConnection,
    suite: TableSuite,
    columns: list[str],
    first_day: dt.date | None,
    last_day: dt.date | None,
) -> list[ExpectationFailure]:
    """A billing account whose lines come in two currencies (SPEC §3.3): every line not in
    the billing currency (`currency:`; without config tables, the account's main currency:
    most lines, ties to the smaller code) that no `exchange_rates:` rate covers on its day
    (from its currency into the billing currency, effective_from on or before the day) is a
    failing row. Covered lines are converted by int_billing_lines_unioned."""
    expressions = ACCOUNT_CURRENCY.get(suite.table.name)
    if expressions is None:
        return []
    account, currency = expressions
    needed = [name for name in suite.table.spec.columns if name in account + currency]
    if not any(name in columns for name in needed):
        return []
    missing = [name for name in needed if name not in columns]
    if missing:
        return []
    billing, has_rates = _config_currency(con)
    rates = (
        "select from_currency, to_currency, effective_from from config.exchange_rates"
        if has_rates
        else "select null::varchar as from_currency, null::varchar as to_currency, "
        "null::date as effective_from where false"
    )
    frame = frame_sql(suite, columns, first_day, last_day)
    rows = con.execute(
        f"""
        with lines as (
            select _source_file, _row_number, _cluster, _day,
                nullif(trim(cast({account} as varchar)), '') as account,
                nullif(upper(trim(cast({currency} as varchar))), '') as currency
            from ({frame}) as raw_
        ),
        counted as (
            select
                account,
                currency,
                row_number() over (
                    partition by account order by count(*) desc, currency
                ) as rank_,
                count(*) over (partition by account) as currencies
            from lines
            where currency is not null
            group by account, currency
        ),
        target as (
            select account, coalesce(?, currency) as currency
            from counted where rank_ = 1 and currencies > 1
        ),
        others as (
            select counted.account, counted.currency as line_currency,
                string_agg(other.currency, ', ' order by other.currency) as other_currencies
            from counted
            inner join counted as other
                on counted.account is not distinct from other.account
                and counted.currency <> other.currency
            group by counted.account, counted.currency
        ),
        rates as ({rates})
        select lines._source_file, lines._row_number, lines._cluster, lines._day,
            lines.account, lines.currency, others.other_currencies, target.currency
        from lines
        inner join target on lines.account is not distinct from target.account
        inner join others
            on lines.account is not distinct from others.account
            and lines.currency = others.line_currency
        where lines.currency is not null and lines.currency <> target.currency
            and not exists (
                select 1 from rates
                where rates.from_currency = lines.currency
                    and rates.to_currency = target.currency
                    and rates.effective_from <= lines._day
            )
        order by lines._source_file, lines._row_number
        """,
        [billing],
    ).fetchall()
    if not rows:
        return []
    return [
        ExpectationFailure(
            expectation="OneCurrencyPerBillingAccount",
            column=currency,
            description="a billing account's lines are in one currency unless `exchange_rates` "
            "in kubeledger.yml converts the others into the billing currency",
            unexpected_count=len(rows),
            rows=[
                FailedRow(
                    source_file=source_file,
                    row_number=int(number) if number is not None else None,
                    cluster_id=cluster,
                    day=day,
                    value=f"account {acct} in {found}, its other lines in {others}: no "
                    f"exchange rate from {found} to {target} on {day}; add `exchange_rates` "
                    "to kubeledger.yml",
                )
                for source_file, number, cluster, day, acct, found, others, target in rows
            ],
        )
    ]
