"""Retention: raw billing rows older than `retention.billing_days` (default 90) are pruned,
except the lines a sealed bill references (SPEC §9, §11), which are kept forever.

A row's age is its charge day (the table's day column) before the as-of date. A sealed bill
references billing lines by `billing_line_id`, the hash staging computes from the line's
source file and row number (macros/portable/surrogate_key.sql), so the same hash over the raw
row's `_source_file` and `_row_number` tells a referenced row. Rows whose day cannot be read
are kept. The billing re-read (billing_reread.py) brings pruned rows back from the exports.
"""

import datetime as dt
from dataclasses import dataclass

import duckdb
from dagster import OpExecutionContext, job, op

from kubeledger.dagster.resources import WAREHOUSE_POOL, WAREHOUSE_RETRY, WarehouseResource
from kubeledger.load.sql import BILLING_LINE_ID_SQL
from kubeledger.quality.tables import BILLING_TABLES

SEALED_REFS = "sealed.sealed_billing_line_refs"


@dataclass(frozen=True)
class PruneResult:
    raw_table: str
    rows_pruned: int
    rows_kept_for_seals: int


def _table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchone()[0]
    )


def prune_raw_billing(
    con: duckdb.DuckDBPyConnection, as_of: dt.date, retention_days: int
) -> list[PruneResult]:
    """Delete raw billing rows charged before as_of - retention_days, sealed lines aside."""
    cutoff = as_of - dt.timedelta(days=retention_days)
    has_refs = _table_exists(con, "sealed", "sealed_billing_line_refs")
    sealed = (
        f"{BILLING_LINE_ID_SQL} in (select billing_line_id from {SEALED_REFS})"
        if has_refs
        else "false"
    )
    results = []
    con.execute("begin transaction")
    try:
        for table in BILLING_TABLES:
            if not _table_exists(con, "raw", table.name):
                continue
            old = f"{table.day_sql()} < date '{cutoff}'"
            kept = con.execute(
                f"select count(*) from {table.qualified} where {old} and {sealed}"
            ).fetchone()[0]
            pruned = con.execute(
                f"delete from {table.qualified} where {old} and not ({sealed})"
            ).fetchone()[0]
            results.append(PruneResult(table.name, int(pruned), int(kept)))
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    return results


@op(pool=WAREHOUSE_POOL, retry_policy=WAREHOUSE_RETRY)
def prune_raw_billing_rows(context: OpExecutionContext, warehouse: WarehouseResource) -> None:
    """Prune raw billing rows past retention (sealed lines kept)."""
    settings = warehouse.settings()
    as_of = warehouse.as_of_date()
    days = int(settings["billing_retention_days"])
    warehouse.prepare()
    with warehouse.connect() as con:
        results = prune_raw_billing(con, as_of, days)
    for result in results:
        context.log.info(
            f"raw.{result.raw_table}: pruned {result.rows_pruned} rows charged before "
            f"{as_of - dt.timedelta(days=days)}; kept {result.rows_kept_for_seals} that "
            "sealed bills reference"
        )


@job(
    name="raw_billing_retention",
    description="Prune raw billing rows older than retention.billing_days (default 90), "
    "keeping the lines sealed bills reference.",
    tags={"reason": "retention"},
)
def raw_billing_retention() -> None:
    prune_raw_billing_rows()
