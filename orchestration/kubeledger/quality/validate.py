"""Run the suites on the raw tables' rows of a day range, offline, with GX's pandas source.

Every row-level rule looks at one row's values only, so a rule whose raw columns hold few
distinct values runs on those values instead of the rows: a rule on one text column (not null,
a pattern, a set of values) always, a rule on typed columns (`<column>__value` a double,
`<column>__at` a UTC timestamp, derived from one raw column each) when the frame's first
SAMPLE_ROWS rows hold few distinct tuples of their raw columns (requests, limits, capacities,
hours). DuckDB finds the distinct tuples in the warehouse and works out the typed columns once
per tuple; the rows holding a failing tuple are then read back with their address. The other
rules (usage, which differs on every row) run on the rows, read from DuckDB into pandas frames
a chunk at a time: the columns those rules read and each row's index (`_source_file`,
`_row_number`, `_cluster`, `rowid`; the day of a failing row is found by its rowid). A failed
expectation comes back with every row it failed on, so data health can say which rows, per
cluster and day; the rows and the counts are the same whichever way a rule ran.

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
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

import duckdb

from kubeledger.load.sql import ident, lit
from kubeledger.quality.suites import SUITES, ExpectationSpec, TableSuite

ROW_ADDRESS = ("_source_file", "_row_number", "_cluster", "_day")
# What the frames of rows carry instead: a row's day is parsed from its text for the failing
# rows only (`_days_of`), by the table's `rowid`, not for every row read (a second of the
# 1,000-node gate's reading)
ROW_INDEX = ("_source_file", "_row_number", "_cluster", "_rowid")


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
        "    rowid as _rowid,\n"
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
    distinct values (each group keyed by the columns it checks, `sources` the raw columns
    whose distinct tuples it runs on), and the others on the rows, by their columns."""

    table: list[int] = field(default_factory=list)
    values: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    sources: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    rows: dict[tuple[str, ...], list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, suite: TableSuite, relation: duckdb.DuckDBPyRelation) -> _Groups:
        """Rules on one text column run on its distinct values, the rest on the rows (until
        `move_few_valued`)."""
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
            elif (
                len(columns) == 1
                and columns[0] in text
                and (sources := _sources(suite, columns, text))
            ):
                groups.values.setdefault(columns, []).append(index)
                groups.sources[columns] = sources
            else:
                groups.rows.setdefault(columns, []).append(index)
        return groups

    def move_few_valued(
        self, con: duckdb.DuckDBPyConnection, suite: TableSuite, sql: str, present: Collection[str]
    ) -> None:
        """Move to `values` the groups on rows whose raw columns hold few distinct values in
        the frame's first SAMPLE_ROWS rows (at most FEW_VALUES_SHARE of them): a month's
        requests, limits and capacities are a few dozen numbers, its hours a few hundred, in
        millions of rows. Either way every row is checked and the same rows fail; the sample
        only decides which way costs less."""
        candidates = {
            columns: sources
            for columns in self.rows
            if (sources := _sources(suite, columns, present)) is not None
        }
        if not candidates:
            return
        read = ", ".join(ident(name) for name in dict.fromkeys(chain(*candidates.values())))
        counts = ", ".join(
            f"count(distinct {_tuple_sql(sources)})" for sources in candidates.values()
        )
        rows, *distinct = con.execute(
            f"select count(*), {counts} from "
            f"(select {read} from ({sql}) as frame_ limit {SAMPLE_ROWS}) as sample_"
        ).fetchall()[0]
        for columns, count in zip(candidates, distinct, strict=True):
            if count <= rows * FEW_VALUES_SHARE:
                self.values[columns] = self.rows.pop(columns)
                self.sources[columns] = candidates[columns]

    def row_columns(self, present: list[str]) -> list[str]:
        """The columns the rules on rows read, of those the table has."""
        wanted = dict.fromkeys(column for columns in self.rows for column in columns)
        return [column for column in wanted if column in present]


# The first rows of a frame whose distinct values decide how a group of rules runs, and the
# share of them a group's distinct values may be for it to run on distinct values.
SAMPLE_ROWS = 200_000
FEW_VALUES_SHARE = 0.05


def _sources(
    suite: TableSuite, columns: tuple[str, ...], present: Collection[str]
) -> tuple[str, ...] | None:
    """The raw columns that `columns` (raw, or derived from one raw column each) read; none
    when one is derived from something else or missing from the table."""
    sources = []
    for column in columns:
        source = suite.sources.get(column, None if column in suite.derived else column)
        if source is None or source not in present:
            return None
        sources.append(source)
    return tuple(dict.fromkeys(sources))


def _tuple_sql(sources: tuple[str, ...]) -> str:
    names = ", ".join(ident(name) for name in sources)
    return names if len(sources) == 1 else f"row({names})"


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
    definition: Any,
    suite: TableSuite,
    groups: dict[tuple[str, ...], list[int]],
    frame: Any,
    days_of: Callable[[dict[str, Any]], list[dict[str, Any]]],
) -> list[ExpectationFailure]:
    """Validate one chunk of the rows with the groups of expectations that read rows, each group
    on a frame of only its columns and the row index (`ROW_INDEX`): GX copies the frame it
    filters once per expectation, and a copy of every column costs far more than the check
    itself. `days_of` gives the failing rows their address (`_days_of`)."""
    present = set(frame.columns) - set(ROW_INDEX)
    outcomes = []
    for columns, indexes in groups.items():
        # a column the table lacks is left out, and GX reports the expectation on it failed
        narrow = frame[[*ROW_INDEX, *(c for c in dict.fromkeys(columns) if c in present)]]
        results = _validate_group(definition, suite, indexes, narrow, list(ROW_INDEX))
        outcomes.extend((outcome, days_of) for outcome in results)
    return _failures(suite, outcomes)


def _days_of(
    con: duckdb.DuckDBPyConnection, suite: TableSuite
) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """GX's failing rows (`ROW_INDEX`) with their address (`ROW_ADDRESS`): each row's day from
    the table, by its `rowid`."""
    table = suite.table

    def rows(details: dict[str, Any]) -> list[dict[str, Any]]:
        listed = [item for item in details["unexpected_index_list"] if isinstance(item, dict)]
        days = dict(
            con.execute(
                f"select rowid, {table.day_sql()} from {table.qualified} "
                "where rowid in (select unnest(?::bigint[]))",
                [[int(item["_rowid"]) for item in listed]],
            ).fetchall()
        )
        return [
            {
                **{key: value for key, value in item.items() if key != "_rowid"},
                "_day": days[int(item["_rowid"])],
            }
            for item in listed
        ]

    return rows


def _validate_table(
    definition: Any, suite: TableSuite, indexes: list[int], columns: list[str]
) -> list[ExpectationFailure]:
    """The table-level expectations (the required columns): on every column, no row."""
    import pandas as pd

    frame = pd.DataFrame({name: pd.Series([], dtype=object) for name in columns})
    results = _validate_group(definition, suite, indexes, frame, list(ROW_ADDRESS))
    return _failures(suite, [(outcome, None) for outcome in results])


def _values_sql(
    suite: TableSuite, sql: str, checked: tuple[str, ...], sources: tuple[str, ...]
) -> str:
    """The distinct tuples of `sources` over the frame's rows, each with the derived columns
    of `checked` worked out from it (once per tuple, not per row)."""
    raw = ", ".join(ident(name) for name in sources)
    typed = "".join(
        f", {suite.derived[column]} as {ident(column)}"
        for column in checked
        if column in suite.derived
    )
    return f"select {raw}{typed} from (select distinct {raw} from ({sql}) as frame_) as values_"


def _value_frames(
    con: duckdb.DuckDBPyConnection, queries: dict[tuple[str, ...], str]
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Each group's distinct values (`_values_sql`), as pandas frames of about
    VALUE_CHUNK_ROWS."""
    for key, query in queries.items():
        for frame in _frames(con.sql(query), VALUE_CHUNK_ROWS):
            yield key, frame


def _validate_values(
    con: duckdb.DuckDBPyConnection,
    definition: Any,
    suite: TableSuite,
    sql: str,
    checked: tuple[str, ...],
    sources: tuple[str, ...],
    indexes: list[int],
    chunks: Iterable[Any],
) -> list[ExpectationFailure]:
    """Validate a group of expectations on the distinct tuples of the raw columns they read
    (null too, if any row has one), a chunk of tuples at a time, and list the rows holding the
    tuples GX found unexpected, in the rows' order, as GX itself lists them (the checked
    values, then the row address).

    Every row-level expectation looks at one row only, so a tuple fails on every row that holds
    it, and on distinct tuples GX runs once per tuple instead of once per row: a month's
    timestamps are a few hundred texts in a million rows, its requests and capacities a few
    dozen numbers. DuckDB finds the distinct tuples (and the rows of a failing one) in the
    warehouse, so those columns are never copied into pandas row by row, and GX runs once per
    table, not once per chunk of rows."""
    import numpy as np

    failed: dict[int, Any] = {}  # spec index: GX's outcome (one with failing values, if any)
    failing: dict[int, list[dict[str, str | None]]] = {}  # spec index: the failing tuples
    for chunk in chunks:
        chunk.insert(0, _VALUE_ID, np.arange(len(chunk)))
        narrow = chunk[[_VALUE_ID, *dict.fromkeys(checked)]]
        for outcome in _validate_group(definition, suite, indexes, narrow, [_VALUE_ID]):
            if outcome.success:
                continue
            index = outcome.expectation_config.meta["spec_index"]
            listed = (outcome.result or {}).get("unexpected_index_list") or []
            ids = [item[_VALUE_ID] for item in listed if isinstance(item, dict)]
            if ids:
                tuples = chunk.loc[chunk[_VALUE_ID].isin(ids), list(sources)]
                failing.setdefault(index, []).extend(
                    {name: _text(value) for name, value in row.items()}
                    for row in tuples.to_dict("records")
                )
            if ids or index not in failed:
                failed[index] = outcome

    struct = ", ".join(f"{lit(name)}: frame_.{ident(name)}" for name in sources)
    struct_type = ", ".join(f"{ident(name)} varchar" for name in sources)
    select = ", ".join(f"frame_.{ident(name)}" for name in [*dict.fromkeys(checked), *ROW_ADDRESS])

    def rows_of(index: int) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
        def rows(_details: dict[str, Any]) -> list[dict[str, Any]]:
            found = con.sql(
                f"select {select} from ({sql}) as frame_ "
                f"where list_contains(?::struct({struct_type})[], {{{struct}}})",
                params=[failing[index]],
            ).to_arrow_table()
            return _to_pandas(found).to_dict("records")

        return rows

    return _failures(suite, [(outcome, rows_of(index)) for index, outcome in failed.items()])


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
        groups.move_few_valued(con, suite, sql, relation.columns)
        failures: dict[tuple[str, str | None, str], ExpectationFailure] = {}
        definition = None
        # The groups on distinct values first: DuckDB finds each group's values (on a cursor of
        # its own, up to _READ_AHEAD_VALUES groups ahead) while GX is imported, then while GX
        # validates the group before.
        queries = {
            checked: _values_sql(suite, sql, checked, sources)
            for checked, sources in groups.sources.items()
        }
        reader = con.cursor()
        values = _read_ahead(_value_frames(reader, queries), ahead=_READ_AHEAD_VALUES)
        try:
            for checked, chunks in groupby(values, key=itemgetter(0)):
                context = context or _gx_context(load_gx)
                definition = definition or _batch_definition(context, suite)
                for failure in _validate_values(
                    con,
                    definition,
                    suite,
                    sql,
                    checked,
                    groups.sources[checked],
                    groups.values[checked],
                    (frame for _, frame in chunks),
                ):
                    _merge(failures, failure)
        finally:
            values.close()
            reader.close()
        read = list(ROW_INDEX)
        read += ["_file_hash"] if fingerprint is not None else []
        read += [name for name in groups.row_columns(relation.columns) if name not in read]
        rows_sql = f"select {', '.join(ident(name) for name in read)} from ({sql}) as frame_"
        files = []
        # The rows in chunks of CHUNK_ROWS, so that memory does not grow with the table (a
        # month of a thousand nodes is tens of millions of rows); every row-level expectation
        # looks at one row, so the chunks' failures add up to the whole frame's.
        days_of = _days_of(con, suite)
        stream = con.cursor()
        frames = _read_ahead(_frames(stream.sql(rows_sql)))
        try:
            for frame in frames:
                validation.rows_checked += len(frame)
                context = context or _gx_context(load_gx)
                definition = definition or _batch_definition(context, suite)
                for failure in _validate_rows(definition, suite, groups.rows, frame, days_of):
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
            for failure in _validate_table(definition, suite, groups.table, relation.columns):
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
# Distinct values validated at once (a column of a month's usage holds millions of them).
VALUE_CHUNK_ROWS = 1_048_576


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


def _frames(query: duckdb.DuckDBPyRelation, chunk_rows: int | None = None) -> Iterator[Any]:
    """The query's rows as pandas frames (`_to_pandas`) of about CHUNK_ROWS rows, streamed
    through Arrow (half the time of DuckDB's own pandas conversion; a relation's reader makes
    no extra copy of the rows, where an executed cursor's would)."""
    import pyarrow as pa

    batches: list[Any] = []
    rows = 0
    chunk_rows = chunk_rows or CHUNK_ROWS
    for batch in query.to_arrow_reader(chunk_rows):
        batches.append(batch)
        rows += batch.num_rows
        if rows >= chunk_rows:
            yield _to_pandas(pa.Table.from_batches(batches))
            batches, rows = [], 0
    if rows:
        yield _to_pandas(pa.Table.from_batches(batches))


_READ_AHEAD_FRAMES = 1  # frames read and waiting while one is validated
_READ_AHEAD_VALUES = 8  # groups' distinct values waiting (most are a few values)
_DONE = object()


def _read_ahead(frames: Iterator[Any], ahead: int = _READ_AHEAD_FRAMES) -> Iterator[Any]:
    """The frames of `frames`, the next one read in a thread while the caller validates this
    one: DuckDB's scan and Arrow's conversion to pandas let go of the GIL, so they run on the
    second core while GX runs on the first (a month of a thousand nodes: 4.8 s of reading
    beside 12 s of GX). Memory stays bounded: at most `ahead` frames waiting and one being read.
    A failure in the reading thread is raised here; when the caller stops early the thread
    stops after the frame it is reading."""
    waiting: queue.Queue[Any] = queue.Queue(maxsize=ahead)
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
