"""Schema `sealed`: its tables, the errors a seal raises, and the reads every seal job shares.

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
- a content hash per sealed artifact (bill or correction) in `seal_digests`, chained to the
  artifact sealed before it, and a write-once copy of its rows outside the warehouse
  (digest.py); `kubeledger verify` (verify.py) recomputes both, since no constraint stops a
  client with write access from editing rows.

Jobs: store.py seals a month, corrections.py seals a correction, digest.py hashes and copies
an artifact, verify.py checks the warehouse against the hashes and the copies.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

import duckdb

from kubeledger import __version__
from kubeledger.currency import format_amount

SCHEMA = "sealed"
LEDGER_VERSION = f"kubeledger {__version__}"

SEALED_TABLES = (
    "sealed_bills",
    "sealed_bill_clusters",
    "sealed_bill_lines",
    "sealed_billing_line_refs",
    "correction_bills",
    "correction_bill_lines",
    "seal_digests",
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
        target_cost decimal(38, 3) not null,
        billed_cost decimal(38, 3) not null,
        estimated_cost decimal(38, 6) not null,
        invoice_cost decimal(38, 3),
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
        invoice_cost decimal(38, 3),
        estimated_cost decimal(38, 6) not null,
        target_cost decimal(38, 3) not null,
        billed_cost decimal(38, 3) not null,
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
        rounded_down_cost decimal(38, 3) not null,
        is_carry_cent boolean not null,
        billed_cost decimal(38, 3) not null check (billed_cost >= 0),
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
        delta_cost decimal(38, 3) not null,
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
        previous_billed_cost decimal(38, 3) not null,
        recomputed_billed_cost decimal(38, 3) not null check (recomputed_billed_cost >= 0),
        delta_cost decimal(38, 3) not null,
        recomputed_estimated_cost decimal(38, 6) not null,
        recomputed_target_cost decimal(38, 3) not null,
        primary key (correction_id, line_id),
        check (delta_cost = recomputed_billed_cost - previous_billed_cost)
    )
    """,
    f"""
    create table if not exists {SCHEMA}.seal_digests (
        artifact_id varchar primary key,
        sequence_number integer not null unique check (sequence_number >= 1),
        artifact_kind varchar not null check (artifact_kind in ('bill', 'correction')),
        bill_id varchar not null references {SCHEMA}.sealed_bills (bill_id),
        bill_month varchar not null,
        content_hash varchar not null,
        previous_chain_hash varchar,
        chain_hash varchar not null unique,
        copy_path varchar not null,
        sealed_at timestamp not null
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
    currency: str = "USD"


@dataclass
class CorrectionBill:
    correction_id: str
    bill_id: str
    bill_month: str
    correction_number: int
    delta_cost: Decimal
    changed_line_count: int
    sealed_at: dt.datetime


class VerificationError(SealError):
    """A sealed month differs from its hashes or its copy; `problems` name what differs."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


def ensure_sealed_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create schema `sealed` and its tables when missing; never drops or alters anything."""
    for statement in DDL:
        con.execute(statement)


def sealed_bill(con: duckdb.DuckDBPyConnection, month: str) -> dict | None:
    """The sealed_bills row of a month, or None when the month is not sealed."""
    if not sealed_schema_exists(con):
        return None
    cursor = con.execute(f"select * from {SCHEMA}.sealed_bills where bill_month = ?", [month])
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip([column[0] for column in cursor.description], row, strict=True))


def corrections_of(con: duckdb.DuckDBPyConnection, month: str) -> list[dict]:
    """The correction_bills rows of a month, oldest first."""
    if not sealed_schema_exists(con):
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
        f"(status {row['bill_status']}, {format_amount(row['billed_cost'], row.get('currency'))} "
        "billed); a sealed bill is never "
        f"rewritten. corrections: kubeledger correct --month {month}"
    )


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


def sealed_schema_exists(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = 'sealed_bills'",
            [SCHEMA],
        ).fetchone()[0]
    )


def rollback_quietly(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("rollback")
    except duckdb.Error:
        pass  # no transaction open any more
