"""Retention: raw billing rows older than `retention.billing_days` (default 90) are pruned,
except the lines a sealed bill references (SPEC §9, §11), which are kept forever, and every row
a day inside the re-run window (`reruns.max_days_back`, default 92) needs: a backfill of such a
day reads its commitment fees, account-level rows and everything else again, so pruning them
would make a re-run differ from the first run (a spurious correction).

A row's age is its charge day (the table's day column) before the as-of date; a row is needed
by the re-run window when its charge period ends after the window's first day begins (so a
row spanning a month, such as tax, stays while any of its days may be re-run). A sealed bill
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
from kubeledger.load.sql import BILLING_LINE_ID_SQL, ident, parse_timestamp_sql
from kubeledger.quality.tables import BILLING_TABLES

SEALED_REFS = "sealed.sealed_billing_line_refs"


# The column holding a raw row's charge period end, per billing table (Azure's daily rows
# have only their day).
PERIOD_END_COLUMNS = {
    "aws_cur_legacy": "lineItem/UsageEndDate",
    "aws_cur2": "line_item_usage_end_date",
    "gcp_billing_export": "usage_end_time",
    "focus_billing": "ChargePeriodEnd",
}


@dataclass(frozen=True)
class PruneResult:
    raw_table: str
    rows_pruned: int
    rows_kept_for_seals: int
    rows_kept_for_reruns: int = 0


def _needed_by_reruns_sql(table, window_start: dt.date) -> str:
    """True when a day on or after `window_start` needs the row (its period reaches it)."""
    start = f"{table.day_sql()} >= date '{window_start}'"
    column = PERIOD_END_COLUMNS.get(table.name)
    if column is None:
        return start
    end = f"timezone('UTC', {parse_timestamp_sql(ident(column))})"
    return f"({start} or coalesce({end} > timestamp '{window_start} 00:00:00', false))"


def _table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchone()[0]
    )


def prune_raw_billing(
    con: duckdb.DuckDBPyConnection,
    as_of: dt.date,
    retention_days: int,
    rerun_max_days_back: int = 92,
) -> list[PruneResult]:
    """Delete raw billing rows charged before as_of - retention_days, sealed lines and rows
    a day of the re-run window (as_of - rerun_max_days_back on) needs aside."""
    cutoff = as_of - dt.timedelta(days=retention_days)
    window_start = as_of - dt.timedelta(days=rerun_max_days_back)
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
            rerun = _needed_by_reruns_sql(table, window_start)
            kept, kept_for_reruns = con.execute(
                f"select count(*) filter (where {sealed}), "
                f"count(*) filter (where not ({sealed}) and {rerun}) "
                f"from {table.qualified} where {old}"
            ).fetchone()
            pruned = con.execute(
                f"delete from {table.qualified} where {old} and not ({sealed}) and not ({rerun})"
            ).fetchone()[0]
            results.append(PruneResult(table.name, int(pruned), int(kept), int(kept_for_reruns)))
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    return results


@op(pool=WAREHOUSE_POOL, retry_policy=WAREHOUSE_RETRY)
def prune_raw_billing_rows(context: OpExecutionContext, warehouse: WarehouseResource) -> None:
    """Prune raw billing rows past retention (sealed lines and the re-run window kept)."""
    settings = warehouse.settings()
    as_of = warehouse.as_of_date()
    days = int(settings["billing_retention_days"])
    max_days_back = int(settings["rerun_max_days_back"])
    warehouse.prepare()
    with warehouse.connect() as con:
        results = prune_raw_billing(con, as_of, days, max_days_back)
    for result in results:
        context.log.info(
            f"raw.{result.raw_table}: pruned {result.rows_pruned} rows charged before "
            f"{as_of - dt.timedelta(days=days)}; kept {result.rows_kept_for_seals} that "
            f"sealed bills reference and {result.rows_kept_for_reruns} that days of the "
            f"re-run window (from {as_of - dt.timedelta(days=max_days_back)}) need"
        )


@job(
    name="raw_billing_retention",
    description="Prune raw billing rows older than retention.billing_days (default 90), "
    "keeping the lines sealed bills reference and every row the re-run window needs.",
    tags={"reason": "retention"},
)
def raw_billing_retention() -> None:
    prune_raw_billing_rows()
