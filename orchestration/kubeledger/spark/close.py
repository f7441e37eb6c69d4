"""The monthly close, the seal, corrections and `verify` on a Spark cluster (SPEC §9, §15).

Spark enforces no key, so a month is written once by the engine's own refusal: every sealed
artifact is a set of tables of its own, created without `if not exists`:

    sealed.sealed_bills_<yyyy>_<mm>          (+ sealed_bill_clusters_, sealed_bill_lines_,
    sealed.seal_digests_<yyyy>_<mm>             sealed_billing_line_refs_<yyyy>_<mm>)
    sealed.correction_bills_<yyyy>_<mm>_c<n> (+ correction_bill_lines_, seal_digests_…_c<n>)

`create table sealed.sealed_bills_2026_10` is the claim: a second seal of October fails on
Spark (TABLE_OR_VIEW_ALREADY_EXISTS) and is reported as AlreadySealedError.

The close logic is not written twice: it runs on a DuckDB *working copy* in memory holding the
month's rows of the close models (int_bill_targets_monthly, int_bill_lines_allocated,
int_billing_lines_scoped, built on Spark by dbt) and every sealed table of the Spark store,
under the same names the DuckDB warehouse uses. `close.store.seal_month`,
`close.corrections.seal_correction` and `close.verify.verify_seals` run on it unchanged; the
only Spark-specific steps are pulling rows in (`SparkSQL.to_duckdb`) and, inside the seal's
transaction, publishing the artifact's tables to Spark from its write-once Parquet copy (so
the content hash, the chain and the copy are byte for byte those the DuckDB close makes; a
failure on Spark rolls the seal back and drops what it created). The copies live under the
warehouse folder's `seals/` (KUBELEDGER_SEAL_COPY_DIR; on a cluster, shared storage).

Not on Spark (yet): the re-allocation of days whose billing lines changed before a close
(SPEC §9) runs on DuckDB only; on Spark, rebuild those days (`kubeledger build --start`).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb

from kubeledger.close import digest
from kubeledger.close.closer import (
    CloseError,
    CloseResult,
    CorrectionResult,
    _refuse_blocked,
    _refuse_missing_days,
    check_closable,
    close_sources,
    month_bounds,
    parse_month,
    read_slices,
    utc_today,
)
from kubeledger.close.relations import SCHEMA_PREFERENCE
from kubeledger.close.seal import seal_correction, seal_month
from kubeledger.close.sealed_schema import (
    DDL,
    SCHEMA,
    AlreadySealedError,
    already_sealed_message,
    ensure_sealed_schema,
    sealed_bill,
)
from kubeledger.close.verify import VerifyReport, verify_seals
from kubeledger.load.sql import ident
from kubeledger.spark.connection import SparkSQL, SparkSQLError, spark_literal
from kubeledger.spark.runner import SparkWarehouse, build_on_spark

# Mirrored in this order: the tables a foreign key points to first.
MIRROR_ORDER = (
    "sealed_bills",
    "sealed_bill_clusters",
    "sealed_bill_lines",
    "sealed_billing_line_refs",
    "correction_bills",
    "correction_bill_lines",
    "seal_digests",
)
TABLE_RE = re.compile(
    r"^(?P<base>" + "|".join(MIRROR_ORDER) + r")_(?P<year>\d{4})_(?P<month>\d{2})(?:_c(?P<n>\d+))?$"
)
CLOSE_MODELS = ("int_bill_targets_monthly", "int_bill_lines_allocated", "int_billing_lines_scoped")


def month_suffix(month: str, correction_number: int | None = None) -> str:
    suffix = parse_month(month).replace("-", "_")
    return suffix if correction_number is None else f"{suffix}_c{correction_number}"


@functools.cache
def _ddl_types() -> dict[str, list[tuple[str, str]]]:
    """Each sealed table's (column, Spark type), in DDL order."""
    with duckdb.connect() as con:
        for statement in DDL:
            con.execute(statement)
        rows = con.execute(
            "select table_name, column_name, data_type from information_schema.columns "
            "where table_schema = ? order by table_name, ordinal_position",
            [SCHEMA],
        ).fetchall()
    types: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        spark_type = {"VARCHAR": "string", "INTEGER": "int"}.get(data_type, data_type.lower())
        types.setdefault(table, []).append((column, spark_type))
    return types


def _spark_name(table: str, suffix: str) -> str:
    return f"{SCHEMA}.{table}_{suffix}"


def _columns_sql(table: str) -> str:
    return ", ".join(f"`{name}` {kind}" for name, kind in _ddl_types()[table])


def _select_cast_sql(table: str) -> str:
    return ", ".join(f"cast(`{name}` as {kind}) as `{name}`" for name, kind in _ddl_types()[table])


@dataclass
class SparkSealedStore:
    """The sealed store on Spark: per-artifact tables in schema `sealed`."""

    spark: SparkSQL

    def tables(self) -> dict[str, list[str]]:
        """base table -> its Spark tables (one per month or correction), sorted."""
        found: dict[str, list[str]] = {base: [] for base in MIRROR_ORDER}
        for name in self.spark.tables(SCHEMA):
            match = TABLE_RE.match(name)
            if match:
                found[match["base"]].append(name)
        return found

    def mirror(self, con: duckdb.DuckDBPyConnection) -> None:
        """Fill the working copy's `sealed` tables with every row of the Spark store."""
        ensure_sealed_schema(con)
        for base, names in self.tables().items():
            if not names:
                continue
            columns = ", ".join(f"`{name}`" for name, _ in _ddl_types()[base])
            union = " union all ".join(f"select {columns} from {SCHEMA}.{name}" for name in names)
            staged = f"_mirror_{base}"
            if self.spark.to_duckdb(con, union, staged):
                names_sql = ", ".join(ident(name) for name, _ in _ddl_types()[base])
                con.execute(
                    f"insert into {SCHEMA}.{base} ({names_sql}) select {names_sql} from {staged}"
                )
                con.execute(f"drop table {staged}")

    def claim(self, table: str, suffix: str) -> None:
        """Create an artifact's first table; Spark refuses when it exists."""
        self.spark.execute(f"create schema if not exists {SCHEMA}")
        name = _spark_name(table, suffix)
        self.spark.execute(f"create table {name} ({_columns_sql(table)}) using parquet")

    def drop(self, names: list[str]) -> None:
        for name in names:
            try:
                self.spark.execute(f"drop table if exists {name}")
            except SparkSQLError:
                pass

    def publish(
        self, con: duckdb.DuckDBPyConnection, copy: digest.PendingCopy, suffix: str
    ) -> list[str]:
        """Write the artifact's tables to Spark from its copy, and its digest row; return the
        tables created (the first, claimed before, is filled, not created)."""
        kind = copy.manifest["artifact_kind"]
        created: list[str] = []
        try:
            for number, table in enumerate(digest.artifact_tables(kind)):
                name = _spark_name(table.name, suffix)
                if number > 0:
                    self.spark.execute(
                        f"create table {name} ({_columns_sql(table.name)}) using parquet"
                    )
                    created.append(name)
                source = str(copy.folder / table.file)
                self.spark.execute(
                    f"insert into {name} select {_select_cast_sql(table.name)} "
                    f"from parquet.`{source}`"
                )
            digest_name = _spark_name("seal_digests", suffix)
            self.spark.execute(
                f"create table {digest_name} ({_columns_sql('seal_digests')}) using parquet"
            )
            created.append(digest_name)
            cursor = con.execute(
                f"select * from {SCHEMA}.seal_digests where artifact_id = ?",
                [copy.manifest["artifact_id"]],
            )
            row = cursor.fetchone()
            values = ", ".join(
                f"cast({spark_literal(value)} as {kind_})"
                for value, (_, kind_) in zip(row, _ddl_types()["seal_digests"], strict=True)
            )
            self.spark.execute(f"insert into {digest_name} select {values}")
        except BaseException:
            self.drop(created)
            raise
        return created


@contextmanager
def working_copy(
    warehouse: SparkWarehouse, month: str | None
) -> Iterator[tuple[SparkSQL, SparkSealedStore, duckdb.DuckDBPyConnection]]:
    """(Spark connection, sealed store, in-memory DuckDB holding the month's close-model rows
    and the mirrored sealed store), with the seal copies under the warehouse's folder."""
    if not warehouse.is_cluster:
        raise CloseError(
            "the close on Spark runs on a cluster through its Thrift Server: set "
            "KUBELEDGER_TARGET=spark_thrift (make spark-up starts one on this machine)"
        )
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    with SparkSQL.from_env(warehouse.exchange_dir) as spark, digest.copies_at(warehouse.copies_dir):
        store = SparkSealedStore(spark)
        if month is not None:
            _pull_close_models(spark, con, month)
        store.mirror(con)
        try:
            yield spark, store, con
        finally:
            con.close()


def _pull_close_models(spark: SparkSQL, con: duckdb.DuckDBPyConnection, month: str) -> None:
    first, last = month_bounds(month)
    located = {}
    for schema in SCHEMA_PREFERENCE:
        for name in spark.tables(schema):
            if name in CLOSE_MODELS and name not in located:
                located[name] = schema
    filters = {
        "int_bill_targets_monthly": f"bill_month = {spark_literal(month)}",
        "int_bill_lines_allocated": f"bill_month = {spark_literal(month)}",
        "int_billing_lines_scoped": (
            f"charge_date >= date'{first.isoformat()}' and charge_date <= date'{last.isoformat()}'"
        ),
    }
    for name, schema in located.items():
        con.execute(f"create schema if not exists {ident(schema)}")
        spark.to_duckdb(
            con,
            f"select * from {schema}.{name} where {filters[name]}",
            f"{ident(schema)}.{ident(name)}",
        )


def _build_close_models(month: str, as_of: dt.date, progress: Callable[[str], None] | None) -> None:
    build_on_spark(
        dbt_vars={"close_month": month, "as_of": as_of.isoformat()},
        select="tag:close",
        progress=progress,
    )


def close_month_on_spark(
    month: str,
    as_of: dt.date | None = None,
    *,
    warehouse: SparkWarehouse | None = None,
    run_dbt: bool = True,
    sealed_at: dt.datetime | None = None,
    progress: Callable[[str], None] | None = None,
) -> CloseResult:
    """`kubeledger close` on Spark: build the close models there, check the month may close
    (closer.check_closable), claim the month's tables, seal (store.seal_month) and publish."""
    month = parse_month(month)
    as_of = as_of or utc_today()
    warehouse = warehouse or SparkWarehouse.from_env()
    if run_dbt:
        _build_close_models(month, as_of, progress)
    suffix = month_suffix(month)
    with working_copy(warehouse, month) as (_spark, store, con):
        slices = read_slices(con, month)
        try:
            check_closable(month, as_of, slices)
        except CloseError as refusal:
            existing = sealed_bill(con, month)
            if existing is not None:
                raise AlreadySealedError(already_sealed_message(existing)) from refusal
            raise
        try:
            store.claim("sealed_bills", suffix)
        except SparkSQLError as exc:
            existing = sealed_bill(con, month)
            text = already_sealed_message(existing) if existing else f"month {month}"
            refusal = str(exc).splitlines()[0][:300]
            raise AlreadySealedError(f"Spark refused the seal ({refusal}): {text}") from exc
        claimed = [_spark_name("sealed_bills", suffix)]
        try:
            bill = seal_month(
                con,
                month,
                close_sources(con),
                as_of=as_of,
                sealed_at=sealed_at,
                publish=lambda con_, copy: store.publish(con_, copy, suffix),
            )
        except BaseException:
            store.drop(claimed)
            raise
    return CloseResult(month=month, as_of=as_of, bill=bill, slices=slices)


def correct_month_on_spark(
    month: str,
    as_of: dt.date | None = None,
    *,
    warehouse: SparkWarehouse | None = None,
    run_dbt: bool = True,
    progress: Callable[[str], None] | None = None,
) -> CorrectionResult:
    """`kubeledger correct` on Spark: the delta against the bill as sealed and corrected, as
    a numbered correction in tables of its own."""
    month = parse_month(month)
    as_of = as_of or utc_today()
    warehouse = warehouse or SparkWarehouse.from_env()
    if run_dbt:
        _build_close_models(month, as_of, progress)
    with working_copy(warehouse, month) as (_spark, store, con):
        bill = sealed_bill(con, month)
        if bill is None:
            raise CloseError(f"month {month} is not sealed on Spark: nothing to correct")
        slices = read_slices(con, month)
        if not slices:
            raise CloseError(f"month {month} has no slices on Spark now; is it built?")
        if not slices[0]["is_past_deadline"]:
            _refuse_missing_days(month, slices, action="correct")
            _refuse_blocked(month, slices, action="correct")
        (number,) = con.execute(
            f"select count(*) + 1 from {SCHEMA}.correction_bills where bill_id = ?",
            [bill["bill_id"]],
        ).fetchone()
        suffix = month_suffix(month, int(number))
        claimed: list[str] = []

        def publish(con_: duckdb.DuckDBPyConnection, copy: digest.PendingCopy) -> None:
            store.claim("correction_bills", suffix)
            claimed.append(_spark_name("correction_bills", suffix))
            store.publish(con_, copy, suffix)

        try:
            correction = seal_correction(
                con, month, close_sources(con), as_of=as_of, publish=publish
            )
        except BaseException:
            store.drop(claimed)
            raise
    return CorrectionResult(month=month, as_of=as_of, correction=correction, slices=slices)


def verify_on_spark(
    month: str | None = None, *, warehouse: SparkWarehouse | None = None
) -> VerifyReport:
    """`kubeledger verify` on Spark: every check of close.verify over the Spark store's rows
    (read through the Thrift Server) and the copies."""
    warehouse = warehouse or SparkWarehouse.from_env()
    try:
        with working_copy(warehouse, None) as (_spark, _store, con):
            return verify_seals(con, month)
    except duckdb.ConstraintException as exc:
        # A row edited on Spark that the sealed tables' constraints refuse (a negative line,
        # a duplicate key, a bill that does not balance): the store was tampered with.
        report = VerifyReport()
        report.problems.append(f"the Spark sealed store holds rows its constraints refuse: {exc}")
        return report
