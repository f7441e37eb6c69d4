"""The sealed store: append-only monthly bills, written once, in schema `sealed` (SPEC §9).

The tables are created here, by Python, never by dbt: no dbt model or seed writes schema
`sealed`, so `dbt build --full-refresh` (which only replaces dbt's own relations) cannot drop
or rewrite them; dbt only reads them as the `sealed` source.

What protects a seal:
- `sealed_bills.bill_month` is a PRIMARY KEY: the database itself refuses a second bill for a
  month (the refusal is turned into `AlreadySealedError`, naming the bill and the way to
  correct it);
- CHECK constraints: a bill's and every cluster slice's billed total equals its target, no
  bill line is negative, only `ready` / `estimated_fallback` slices are stored;
- FOREIGN KEYs from lines, slices, billing-line references and corrections to their bill, so a
  bill that anything refers to cannot be deleted;
- everything of one seal is inserted in one transaction, after asserting with `=` on
  decimal(38, 2), per cluster and cost family, that the billed lines sum to the target (and
  again on the rows as inserted, before the commit); if any slice fails nothing is written
  and `UnbalancedBillError` names the cluster.

Corrections are their own artifacts (`correction_bills` / `correction_bill_lines`): numbered
per bill (UNIQUE (bill_id, correction_number)), each holding the per-line delta between the
month recomputed now and the bill as sealed plus the earlier corrections.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from decimal import Decimal

import duckdb

from kubeledger import __version__

SCHEMA = "sealed"
LEDGER_VERSION = f"kubeledger {__version__}"

SEALED_TABLES = (
    "sealed_bills",
    "sealed_bill_clusters",
    "sealed_bill_lines",
    "sealed_billing_line_refs",
    "correction_bills",
    "correction_bill_lines",
)

DDL = (
    f"create schema if not exists {SCHEMA}",
    f"""
    create table if not exists {SCHEMA}.sealed_bills (
        bill_month varchar primary key,
        bill_id varchar not null unique,
        month_start_date date not null,
        bill_status varchar not null check (bill_status in ('full', 'partial', 'none')),
        blended_factor decimal(38, 10),
        target_cost decimal(38, 2) not null,
        billed_cost decimal(38, 2) not null,
        estimated_cost decimal(38, 6) not null,
        invoice_cost decimal(38, 2),
        slice_count integer not null,
        reconciled_slice_count integer not null,
        cluster_count integer not null,
        line_count integer not null,
        billing_line_count integer not null,
        estimated_clusters varchar,
        currency varchar,
        as_of_date date not null,
        sealed_at timestamp not null,
        ledger_version varchar not null,
        check (billed_cost = target_cost)
    )
    """,
    f"""
    create table if not exists {SCHEMA}.sealed_bill_clusters (
        bill_id varchar not null references {SCHEMA}.sealed_bills (bill_id),
        bill_month varchar not null,
        month_start_date date not null,
        cluster_id varchar not null,
        cost_family varchar not null,
        currency varchar,
        has_billing_link boolean not null,
        link_state varchar not null,
        billing_line_count integer not null,
        invoice_cost decimal(38, 2),
        estimated_cost decimal(38, 6) not null,
        target_cost decimal(38, 2) not null,
        billed_cost decimal(38, 2) not null,
        basis varchar not null,
        is_reconciled boolean not null,
        factor decimal(38, 10),
        invoice_factor decimal(38, 10),
        factor_drift decimal(38, 10),
        has_factor_drift boolean not null,
        close_status varchar not null
            check (close_status in ('ready', 'estimated_fallback')),
        reason varchar,
        anomaly varchar,
        days_due integer not null,
        days_missing integer not null,
        first_missing_date date,
        missing_dates varchar,
        unassigned_policy varchar not null,
        as_of_date date not null,
        closable_from_date date not null,
        deadline_date date not null,
        primary key (bill_month, cluster_id, cost_family),
        check (billed_cost = target_cost)
    )
    """,
    f"""
    create table if not exists {SCHEMA}.sealed_bill_lines (
        bill_id varchar not null references {SCHEMA}.sealed_bills (bill_id),
        line_id varchar not null,
        bill_month varchar not null,
        month_start_date date not null,
        cluster_id varchar not null,
        cost_family varchar not null,
        line_key varchar not null,
        is_unassigned boolean not null,
        estimated_cost decimal(38, 6) not null,
        allocation_estimate decimal(38, 6) not null,
        exact_share decimal(38, 10) not null,
        rounded_down_cost decimal(38, 2) not null,
        is_carry_cent boolean not null,
        billed_cost decimal(38, 2) not null check (billed_cost >= 0),
        primary key (bill_id, line_id)
    )
    """,
    f"""
    create table if not exists {SCHEMA}.sealed_billing_line_refs (
        bill_id varchar not null references {SCHEMA}.sealed_bills (bill_id),
        bill_month varchar not null,
        cluster_id varchar not null,
        cost_family varchar not null,
        billing_line_id varchar not null,
        charge_date date,
        resource_type varchar,
        resource_key varchar,
        scope_status varchar,
        provider varchar,
        billing_account_id varchar,
        effective_cost decimal(38, 10),
        primary key (bill_id, cluster_id, cost_family, billing_line_id)
    )
    """,
    f"""
    create table if not exists {SCHEMA}.correction_bills (
        correction_id varchar primary key,
        bill_id varchar not null references {SCHEMA}.sealed_bills (bill_id),
        bill_month varchar not null,
        correction_number integer not null check (correction_number >= 1),
        delta_cost decimal(38, 2) not null,
        changed_line_count integer not null,
        as_of_date date not null,
        sealed_at timestamp not null,
        ledger_version varchar not null,
        unique (bill_id, correction_number)
    )
    """,
    f"""
    create table if not exists {SCHEMA}.correction_bill_lines (
        correction_id varchar not null references {SCHEMA}.correction_bills (correction_id),
        line_id varchar not null,
        bill_id varchar not null,
        bill_month varchar not null,
        month_start_date date not null,
        cluster_id varchar not null,
        cost_family varchar not null,
        line_key varchar not null,
        previous_billed_cost decimal(38, 2) not null,
        recomputed_billed_cost decimal(38, 2) not null check (recomputed_billed_cost >= 0),
        delta_cost decimal(38, 2) not null,
        recomputed_estimated_cost decimal(38, 6) not null,
        recomputed_target_cost decimal(38, 2) not null,
        primary key (correction_id, line_id),
        check (delta_cost = recomputed_billed_cost - previous_billed_cost)
    )
    """,
)


class SealError(RuntimeError):
    """A seal or a correction was refused; the message says why and what to do."""


class AlreadySealedError(SealError):
    """The database refused a second bill for a month that is sealed."""


class UnbalancedBillError(SealError):
    """A bill's lines do not sum to its target; nothing was written."""


@dataclass(frozen=True)
class SealSources:
    """Relations (qualified names) the seal reads for one month.

    lines: rows shaped like int_bill_lines_allocated; slices: like int_bill_targets_monthly;
    billing_lines: like int_billing_lines_scoped (None: no billing-line references stored).
    """

    lines: str
    slices: str
    billing_lines: str | None = None


@dataclass
class SealedBill:
    bill_month: str
    bill_id: str
    bill_status: str
    target_cost: Decimal
    billed_cost: Decimal
    blended_factor: Decimal | None
    line_count: int
    slice_count: int
    billing_line_count: int
    sealed_at: dt.datetime
    estimated_clusters: list[str] = field(default_factory=list)


@dataclass
class CorrectionBill:
    correction_id: str
    bill_id: str
    bill_month: str
    correction_number: int
    delta_cost: Decimal
    changed_line_count: int
    sealed_at: dt.datetime


def ensure_sealed_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create schema `sealed` and its tables when missing; never drops or alters anything."""
    for statement in DDL:
        con.execute(statement)


def sealed_bill(con: duckdb.DuckDBPyConnection, month: str) -> dict | None:
    """The sealed_bills row of a month, or None when the month is not sealed."""
    if not _sealed_schema_exists(con):
        return None
    cursor = con.execute(f"select * from {SCHEMA}.sealed_bills where bill_month = ?", [month])
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip([column[0] for column in cursor.description], row, strict=True))


def corrections_of(con: duckdb.DuckDBPyConnection, month: str) -> list[dict]:
    """The correction_bills rows of a month, oldest first."""
    if not _sealed_schema_exists(con):
        return []
    cursor = con.execute(
        f"select * from {SCHEMA}.correction_bills where bill_month = ? order by correction_number",
        [month],
    )
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def already_sealed_message(row: dict) -> str:
    sealed_at = row["sealed_at"]
    when = sealed_at.strftime("%Y-%m-%d %H:%M UTC") if sealed_at else "an earlier run"
    month = row["bill_month"]
    return (
        f"month {month} is already sealed as bill {row['bill_id']} on {when} "
        f"(status {row['bill_status']}, {row['billed_cost']} billed); a sealed bill is never "
        f"rewritten. corrections: kubeledger correct --month {month}"
    )


def seal_month(
    con: duckdb.DuckDBPyConnection,
    month: str,
    sources: SealSources,
    *,
    as_of: dt.date,
    ledger_version: str = LEDGER_VERSION,
    sealed_at: dt.datetime | None = None,
) -> SealedBill:
    """Seal one month from `sources` in one transaction; refuse if it is sealed already.

    Raises UnbalancedBillError (nothing written) when a cluster's lines do not sum to its
    target, SealError when a slice is still blocked or the month has nothing to bill, and
    AlreadySealedError when the database refuses the second bill of a month.
    """
    sealed_at = sealed_at or _utc_now()
    ensure_sealed_schema(con)
    con.execute("begin transaction")
    try:
        _stage(con, month, sources)
        _refuse_blocked(con, month)
        _assert_balanced(con, month, "_seal_lines", "_seal_slices", "staged")
        summary = _bill_summary(con, month)
        bill_id = _bill_id(con, month)
        try:
            con.execute(
                f"""
                insert into {SCHEMA}.sealed_bills
                select
                    ? as bill_month,
                    ? as bill_id,
                    cast(? as date) as month_start_date,
                    ? as bill_status,
                    cast(? as decimal(38, 10)) as blended_factor,
                    cast(? as decimal(38, 2)) as target_cost,
                    cast(? as decimal(38, 2)) as billed_cost,
                    cast(? as decimal(38, 6)) as estimated_cost,
                    cast(? as decimal(38, 2)) as invoice_cost,
                    ? as slice_count,
                    ? as reconciled_slice_count,
                    ? as cluster_count,
                    ? as line_count,
                    ? as billing_line_count,
                    ? as estimated_clusters,
                    ? as currency,
                    cast(? as date) as as_of_date,
                    cast(? as timestamp) as sealed_at,
                    ? as ledger_version
                """,
                [
                    month,
                    bill_id,
                    summary["month_start_date"],
                    summary["bill_status"],
                    summary["blended_factor"],
                    summary["target_cost"],
                    summary["billed_cost"],
                    summary["estimated_cost"],
                    summary["invoice_cost"],
                    summary["slice_count"],
                    summary["reconciled_slice_count"],
                    summary["cluster_count"],
                    summary["line_count"],
                    summary["billing_line_count"],
                    ", ".join(summary["estimated_clusters"]) or None,
                    summary["currency"],
                    as_of,
                    sealed_at,
                    ledger_version,
                ],
            )
        except duckdb.ConstraintException as exc:
            con.execute("rollback")
            existing = sealed_bill(con, month)
            if existing is not None:
                raise AlreadySealedError(already_sealed_message(existing)) from exc
            raise SealError(f"the database refused the bill of {month}: {exc}") from exc
        _insert_sealed_rows(con, month, bill_id)
        _assert_balanced(
            con,
            month,
            f"(select * from {SCHEMA}.sealed_bill_lines where bill_id = '{bill_id}')",
            f"(select * from {SCHEMA}.sealed_bill_clusters where bill_id = '{bill_id}')",
            "as inserted",
        )
        con.execute("commit")
    except BaseException:
        _rollback_quietly(con)
        raise
    finally:
        _drop_staging(con)
    return SealedBill(
        bill_month=month,
        bill_id=bill_id,
        bill_status=summary["bill_status"],
        target_cost=summary["target_cost"],
        billed_cost=summary["billed_cost"],
        blended_factor=summary["blended_factor"],
        line_count=summary["line_count"],
        slice_count=summary["slice_count"],
        billing_line_count=summary["billing_line_count"],
        sealed_at=sealed_at,
        estimated_clusters=summary["estimated_clusters"],
    )


def seal_correction(
    con: duckdb.DuckDBPyConnection,
    month: str,
    sources: SealSources,
    *,
    as_of: dt.date,
    ledger_version: str = LEDGER_VERSION,
    sealed_at: dt.datetime | None = None,
) -> CorrectionBill | None:
    """Seal the delta between the month recomputed now and its bill as sealed and corrected.

    Returns None (and writes nothing) when no line changed. The recomputed month must balance
    and have no blocked slice, like a close.
    """
    sealed_at = sealed_at or _utc_now()
    bill = sealed_bill(con, month)
    if bill is None:
        raise SealError(
            f"month {month} is not sealed, so there is nothing to correct; close it first: "
            f"kubeledger close --month {month}"
        )
    bill_id = bill["bill_id"]
    con.execute("begin transaction")
    try:
        _stage(con, month, sources)
        _refuse_blocked(con, month)
        _assert_balanced(con, month, "_seal_lines", "_seal_slices", "recomputed")
        con.execute(
            f"""
            create temp table _seal_deltas as
            with

            current_lines as (
                select
                    line_id,
                    any_value(month_start_date) as month_start_date,
                    any_value(cluster_id) as cluster_id,
                    any_value(cost_family) as cost_family,
                    any_value(line_key) as line_key,
                    sum(billed_cost) as billed_cost
                from (
                    select line_id, month_start_date, cluster_id, cost_family, line_key,
                        billed_cost
                    from {SCHEMA}.sealed_bill_lines
                    where bill_id = $bill_id
                    union all
                    select line_id, month_start_date, cluster_id, cost_family, line_key,
                        delta_cost
                    from {SCHEMA}.correction_bill_lines
                    where bill_id = $bill_id
                ) as effective
                group by line_id
            ),

            recomputed as (
                select
                    lines.line_id,
                    lines.month_start_date,
                    lines.cluster_id,
                    lines.cost_family,
                    lines.line_key,
                    lines.billed_cost,
                    lines.estimated_cost,
                    slices.target_cost
                from _seal_lines as lines
                inner join _seal_slices as slices
                    on lines.cluster_id = slices.cluster_id
                    and lines.cost_family = slices.cost_family
            ),

            recomputed_slices as (
                select cluster_id, cost_family, target_cost from _seal_slices
            )

            select
                coalesce(recomputed.line_id, current_lines.line_id) as line_id,
                coalesce(recomputed.month_start_date, current_lines.month_start_date)
                    as month_start_date,
                coalesce(recomputed.cluster_id, current_lines.cluster_id) as cluster_id,
                coalesce(recomputed.cost_family, current_lines.cost_family) as cost_family,
                coalesce(recomputed.line_key, current_lines.line_key) as line_key,
                cast(coalesce(current_lines.billed_cost, 0) as decimal(38, 2))
                    as previous_billed_cost,
                cast(coalesce(recomputed.billed_cost, 0) as decimal(38, 2))
                    as recomputed_billed_cost,
                cast(
                    coalesce(recomputed.billed_cost, 0) - coalesce(current_lines.billed_cost, 0)
                    as decimal(38, 2)
                ) as delta_cost,
                cast(coalesce(recomputed.estimated_cost, 0) as decimal(38, 6))
                    as recomputed_estimated_cost,
                cast(
                    coalesce(recomputed.target_cost, recomputed_slices.target_cost, 0)
                    as decimal(38, 2)
                ) as recomputed_target_cost
            from recomputed
            full outer join current_lines
                on recomputed.line_id = current_lines.line_id
            left join recomputed_slices
                on coalesce(recomputed.cluster_id, current_lines.cluster_id)
                    = recomputed_slices.cluster_id
                and coalesce(recomputed.cost_family, current_lines.cost_family)
                    = recomputed_slices.cost_family
            where not (
                coalesce(recomputed.billed_cost, 0) = coalesce(current_lines.billed_cost, 0)
            )
            """,
            {"bill_id": bill_id},
        )
        changed, delta_total = con.execute(
            "select count(*), coalesce(sum(delta_cost), 0) from _seal_deltas"
        ).fetchone()
        if changed == 0:
            con.execute("rollback")
            return None
        number = con.execute(
            f"select coalesce(max(correction_number), 0) + 1 from {SCHEMA}.correction_bills "
            "where bill_id = ?",
            [bill_id],
        ).fetchone()[0]
        correction_id = f"{bill_id}-c{number}"
        con.execute(
            f"""
            insert into {SCHEMA}.correction_bills
            select ?, ?, ?, ?, cast(? as decimal(38, 2)), ?, cast(? as date),
                cast(? as timestamp), ?
            """,
            [
                correction_id,
                bill_id,
                month,
                number,
                delta_total,
                changed,
                as_of,
                sealed_at,
                ledger_version,
            ],
        )
        con.execute(
            f"""
            insert into {SCHEMA}.correction_bill_lines
            select
                ? as correction_id,
                line_id,
                ? as bill_id,
                ? as bill_month,
                month_start_date,
                cluster_id,
                cost_family,
                line_key,
                previous_billed_cost,
                recomputed_billed_cost,
                delta_cost,
                recomputed_estimated_cost,
                recomputed_target_cost
            from _seal_deltas
            """,
            [correction_id, bill_id, month],
        )
        # The bill as sealed plus every correction must now be the recomputed bill.
        unbalanced = con.execute(
            f"""
            with effective as (
                select cluster_id, cost_family, sum(billed_cost) as billed_cost
                from (
                    select cluster_id, cost_family, billed_cost
                    from {SCHEMA}.sealed_bill_lines where bill_id = $bill_id
                    union all
                    select cluster_id, cost_family, delta_cost
                    from {SCHEMA}.correction_bill_lines where bill_id = $bill_id
                ) as rows_
                group by cluster_id, cost_family
            )
            select slices.cluster_id, slices.cost_family, slices.target_cost,
                effective.billed_cost
            from _seal_slices as slices
            left join effective
                on slices.cluster_id = effective.cluster_id
                and slices.cost_family = effective.cost_family
            where not (coalesce(effective.billed_cost, 0) = slices.target_cost)
            """,
            {"bill_id": bill_id},
        ).fetchall()
        if unbalanced:
            raise UnbalancedBillError(
                f"correction of {month} would not make the bill equal its recomputed target; "
                "nothing was written: " + _describe_unbalanced(unbalanced)
            )
        con.execute("commit")
    except BaseException:
        _rollback_quietly(con)
        raise
    finally:
        _drop_staging(con)
    return CorrectionBill(
        correction_id=correction_id,
        bill_id=bill_id,
        bill_month=month,
        correction_number=number,
        delta_cost=Decimal(delta_total),
        changed_line_count=changed,
        sealed_at=sealed_at,
    )


# --- internals -------------------------------------------------------------------------------


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


def _sealed_schema_exists(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = 'sealed_bills'",
            [SCHEMA],
        ).fetchone()[0]
    )


def _rollback_quietly(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("rollback")
    except duckdb.Error:
        pass  # no transaction open any more


def _drop_staging(con: duckdb.DuckDBPyConnection) -> None:
    for table in ("_seal_lines", "_seal_slices", "_seal_refs", "_seal_deltas"):
        try:
            con.execute(f"drop table if exists {table}")
        except duckdb.Error:
            pass


def _stage(con: duckdb.DuckDBPyConnection, month: str, sources: SealSources) -> None:
    """Copy the month's slices, lines and billing-line references into temp tables."""
    _drop_staging(con)
    con.execute(
        f"""
        create temp table _seal_slices as
        select
            bill_month, month_start_date, cluster_id, cost_family, currency, has_billing_link,
            link_state, cast(billing_line_count as integer) as billing_line_count,
            invoice_cost, estimated_cost, target_cost, basis, is_reconciled, factor,
            invoice_factor, factor_drift, has_factor_drift, close_status, reason, anomaly,
            cast(days_due as integer) as days_due,
            cast(days_missing as integer) as days_missing,
            first_missing_date, missing_dates, unassigned_policy, as_of_date,
            closable_from_date, deadline_date
        from {sources.slices}
        where bill_month = ?
        """,
        [month],
    )
    con.execute(
        f"""
        create temp table _seal_lines as
        select
            line_id, bill_month, month_start_date, cluster_id, cost_family, line_key,
            is_unassigned, estimated_cost, allocation_estimate, exact_share,
            rounded_down_cost, is_carry_cent, billed_cost
        from {sources.lines}
        where bill_month = ?
        """,
        [month],
    )
    if sources.billing_lines is not None:
        con.execute(
            f"""
            create temp table _seal_refs as
            select
                slices.bill_month,
                lines.cluster_id,
                lines.cost_family,
                lines.billing_line_id,
                min(lines.charge_date) as charge_date,
                min(lines.resource_type) as resource_type,
                min(lines.resource_key) as resource_key,
                min(lines.scope_status) as scope_status,
                min(lines.provider) as provider,
                min(lines.billing_account_id) as billing_account_id,
                sum(lines.effective_cost) as effective_cost
            from {sources.billing_lines} as lines
            inner join _seal_slices as slices
                on lines.cluster_id = slices.cluster_id
                and lines.cost_family = slices.cost_family
                and lines.charge_date >= slices.month_start_date
                and lines.charge_date < slices.month_start_date + interval 1 month
            group by slices.bill_month, lines.cluster_id, lines.cost_family,
                lines.billing_line_id
            """
        )
    else:
        con.execute(
            """
            create temp table _seal_refs (
                bill_month varchar, cluster_id varchar, cost_family varchar,
                billing_line_id varchar, charge_date date, resource_type varchar,
                resource_key varchar, scope_status varchar, provider varchar,
                billing_account_id varchar, effective_cost decimal(38, 10)
            )
            """
        )
    if con.execute("select count(*) from _seal_slices").fetchone()[0] == 0:
        raise SealError(
            f"month {month} has nothing to bill: no cluster has cost or billing lines in it "
            "(is the warehouse built for that month?)"
        )


def _refuse_blocked(con: duckdb.DuckDBPyConnection, month: str) -> None:
    blocked = con.execute(
        """
        select cluster_id, cost_family, reason, invoice_factor
        from _seal_slices where close_status not in ('ready', 'estimated_fallback')
        order by cluster_id, cost_family
        """
    ).fetchall()
    if blocked:
        names = "; ".join(
            f"{cluster} {family}: {reason}" + (f" (factor {factor})" if factor is not None else "")
            for cluster, family, reason, factor in blocked
        )
        raise SealError(f"month {month} has blocked clusters, nothing was sealed: {names}")


def _describe_unbalanced(rows: list[tuple]) -> str:
    return "; ".join(
        f"cluster {cluster} {family}: billed {billed} <> target {target}"
        for cluster, family, target, billed in rows
    )


def _assert_balanced(
    con: duckdb.DuckDBPyConnection, month: str, lines: str, slices: str, stage: str
) -> None:
    """Every slice's lines sum to its target exactly (`=` on decimal(38, 2)), none negative,
    and no line belongs to a slice that is not in the bill."""
    unbalanced = con.execute(
        f"""
        with line_sums as (
            select
                cluster_id,
                cost_family,
                sum(billed_cost) as billed_cost,
                count(*) filter (where billed_cost < 0) as negative_lines
            from {lines} as lines_
            group by cluster_id, cost_family
        )
        select
            coalesce(slices_.cluster_id, line_sums.cluster_id) as cluster_id,
            coalesce(slices_.cost_family, line_sums.cost_family) as cost_family,
            slices_.target_cost,
            line_sums.billed_cost
        from {slices} as slices_
        full outer join line_sums
            on slices_.cluster_id = line_sums.cluster_id
            and slices_.cost_family = line_sums.cost_family
        where
            slices_.cluster_id is null
            or slices_.target_cost is null
            or not (
                cast(coalesce(line_sums.billed_cost, 0) as decimal(38, 2))
                = cast(slices_.target_cost as decimal(38, 2))
            )
            or coalesce(line_sums.negative_lines, 0) > 0
        order by 1, 2
        """
    ).fetchall()
    if unbalanced:
        raise UnbalancedBillError(
            f"the bill of {month} does not balance ({stage}); nothing was sealed: "
            + _describe_unbalanced(unbalanced)
        )


def _bill_summary(con: duckdb.DuckDBPyConnection, month: str) -> dict:
    row = con.execute(
        """
        select
            min(month_start_date),
            sum(target_cost),
            sum(estimated_cost),
            sum(invoice_cost),
            count(*),
            count(*) filter (where is_reconciled),
            count(distinct cluster_id),
            min(currency),
            count(distinct currency)
        from _seal_slices
        """
    ).fetchone()
    (month_start, target, estimate, invoice, slices, reconciled, clusters, currency, currencies) = (
        row
    )
    if currencies > 1:
        raise SealError(
            f"month {month} mixes currencies across clusters; bills are per currency and an "
            "org bill cannot add them"
        )
    billed, lines = con.execute(
        "select coalesce(sum(billed_cost), 0), count(*) from _seal_lines"
    ).fetchone()
    billing_lines = con.execute("select count(*) from _seal_refs").fetchone()[0]
    estimated_clusters = [
        row[0]
        for row in con.execute(
            "select distinct cluster_id from _seal_slices where not is_reconciled order by 1"
        ).fetchall()
    ]
    if reconciled == slices:
        status = "full"
    elif reconciled == 0:
        status = "none"
    else:
        status = "partial"
    # Display only: the org's target over its estimate.
    blended = None
    if estimate and Decimal(estimate) > 0:
        blended = (Decimal(target) / Decimal(estimate)).quantize(Decimal("0.0000000001"))
    return {
        "month_start_date": month_start,
        "target_cost": Decimal(target),
        "billed_cost": Decimal(billed),
        "estimated_cost": Decimal(estimate),
        "invoice_cost": invoice,
        "slice_count": slices,
        "reconciled_slice_count": reconciled,
        "cluster_count": clusters,
        "line_count": lines,
        "billing_line_count": billing_lines,
        "estimated_clusters": estimated_clusters,
        "currency": currency,
        "bill_status": status,
        "blended_factor": blended,
    }


def _bill_id(con: duckdb.DuckDBPyConnection, month: str) -> str:
    """A content hash of the month's lines and slices: the same inputs give the same ID."""
    digest = hashlib.sha256(month.encode())
    for row in con.execute(
        "select line_id, cast(billed_cost as varchar), cast(estimated_cost as varchar) "
        "from _seal_lines order by encode(line_id)"
    ).fetchall():
        digest.update("\x1f".join(row).encode())
    for row in con.execute(
        "select cluster_id, cost_family, cast(target_cost as varchar), basis "
        "from _seal_slices order by encode(cluster_id), encode(cost_family)"
    ).fetchall():
        digest.update("\x1e".join(row).encode())
    return f"bill-{month}-{digest.hexdigest()[:12]}"


def _insert_sealed_rows(con: duckdb.DuckDBPyConnection, month: str, bill_id: str) -> None:
    con.execute(
        f"""
        insert into {SCHEMA}.sealed_bill_clusters
        select
            $bill_id as bill_id,
            slices.bill_month,
            slices.month_start_date,
            slices.cluster_id,
            slices.cost_family,
            slices.currency,
            slices.has_billing_link,
            slices.link_state,
            slices.billing_line_count,
            slices.invoice_cost,
            slices.estimated_cost,
            slices.target_cost,
            cast(coalesce(line_sums.billed_cost, 0) as decimal(38, 2)) as billed_cost,
            slices.basis,
            slices.is_reconciled,
            slices.factor,
            slices.invoice_factor,
            slices.factor_drift,
            slices.has_factor_drift,
            slices.close_status,
            slices.reason,
            slices.anomaly,
            slices.days_due,
            slices.days_missing,
            slices.first_missing_date,
            slices.missing_dates,
            slices.unassigned_policy,
            slices.as_of_date,
            slices.closable_from_date,
            slices.deadline_date
        from _seal_slices as slices
        left join (
            select cluster_id, cost_family, sum(billed_cost) as billed_cost
            from _seal_lines
            group by cluster_id, cost_family
        ) as line_sums
            on slices.cluster_id = line_sums.cluster_id
            and slices.cost_family = line_sums.cost_family
        """,
        {"bill_id": bill_id},
    )
    con.execute(
        f"""
        insert into {SCHEMA}.sealed_bill_lines
        select
            $bill_id as bill_id,
            line_id,
            bill_month,
            month_start_date,
            cluster_id,
            cost_family,
            line_key,
            is_unassigned,
            estimated_cost,
            allocation_estimate,
            exact_share,
            rounded_down_cost,
            is_carry_cent,
            billed_cost
        from _seal_lines
        """,
        {"bill_id": bill_id},
    )
    con.execute(
        f"""
        insert into {SCHEMA}.sealed_billing_line_refs
        select
            $bill_id as bill_id,
            bill_month,
            cluster_id,
            cost_family,
            billing_line_id,
            charge_date,
            resource_type,
            resource_key,
            scope_status,
            provider,
            billing_account_id,
            effective_cost
        from _seal_refs
        """,
        {"bill_id": bill_id},
    )
