"""Seal a month: its bill, slices, lines and billing-line references, written once (SPEC §9).

Everything of one seal is inserted in one transaction, after asserting with `=` on
decimal(38, 3), per cluster and cost family, that the billed lines sum to the target (and
again on the rows as inserted, before the commit); if any slice fails nothing is written and
`UnbalancedBillError` names the cluster. In the same transaction the bill is hashed, chained
and copied outside the warehouse (digest.py); the copy is published once the seal commits.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal

import duckdb

from kubeledger.close import digest
from kubeledger.close.sealed_schema import (
    LEDGER_VERSION,
    SCHEMA,
    AlreadySealedError,
    SealedBill,
    SealError,
    SealSources,
    UnbalancedBillError,
    already_sealed_message,
    ensure_sealed_schema,
    rollback_quietly,
    sealed_bill,
    utc_now,
)
from kubeledger.currency import minor_unit_digits
from kubeledger.load.sql import lit


def seal_month(
    con: duckdb.DuckDBPyConnection,
    month: str,
    sources: SealSources,
    *,
    as_of: dt.date,
    ledger_version: str = LEDGER_VERSION,
    sealed_at: dt.datetime | None = None,
    publish: digest.Publisher | None = None,
) -> SealedBill:
    """Seal one month from `sources` in one transaction; refuse if it is sealed already.

    Raises UnbalancedBillError (nothing written) when a cluster's lines do not sum to its
    target, SealError when a slice is still blocked or the month has nothing to bill, and
    AlreadySealedError when the database refuses the second bill of a month. `publish` is
    called with the pending copy just before the commit (the Spark close writes the bill's
    tables to Spark there; if it raises, nothing is sealed).
    """
    sealed_at = sealed_at or utc_now()
    ensure_sealed_schema(con)
    copy: digest.PendingCopy | None = None
    con.execute("begin transaction")
    try:
        stage(con, month, sources)
        refuse_blocked(con, month)
        assert_balanced(con, month, "_seal_lines", "_seal_slices", "staged")
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
                    cast(? as decimal(38, 3)) as target_cost,
                    cast(? as decimal(38, 3)) as billed_cost,
                    cast(? as decimal(38, 6)) as estimated_cost,
                    cast(? as decimal(38, 3)) as invoice_cost,
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
        assert_balanced(
            con,
            month,
            f"(select * from {SCHEMA}.sealed_bill_lines where bill_id = {lit(bill_id)})",
            f"(select * from {SCHEMA}.sealed_bill_clusters where bill_id = {lit(bill_id)})",
            "as inserted",
        )
        copy = digest.write_copy(
            con, kind="bill", artifact_id=bill_id, bill_id=bill_id, month=month, sealed_at=sealed_at
        )
        if publish is not None:
            publish(con, copy)
        con.execute("commit")
    except BaseException:
        rollback_quietly(con)
        digest.discard(copy)
        raise
    finally:
        drop_staging(con)
    digest.finalize(copy.folder)
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
        currency=summary["currency"] or "USD",
    )


def drop_staging(con: duckdb.DuckDBPyConnection) -> None:
    for table in ("_seal_lines", "_seal_slices", "_seal_refs", "_seal_deltas"):
        try:
            con.execute(f"drop table if exists {table}")
        except duckdb.Error:
            pass


def stage(con: duckdb.DuckDBPyConnection, month: str, sources: SealSources) -> None:
    """Copy the month's slices, lines and billing-line references into temp tables."""
    drop_staging(con)
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


def refuse_blocked(con: duckdb.DuckDBPyConnection, month: str) -> None:
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


def describe_unbalanced(rows: list[tuple]) -> str:
    return "; ".join(
        f"cluster {cluster} {family}: billed {billed} <> target {target}"
        for cluster, family, target, billed in rows
    )


def assert_balanced(
    con: duckdb.DuckDBPyConnection, month: str, lines: str, slices: str, stage: str
) -> None:
    """Every slice's lines sum to its target exactly (`=` on decimal(38, 3)), none negative,
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
                cast(coalesce(line_sums.billed_cost, 0) as decimal(38, 3))
                = cast(slices_.target_cost as decimal(38, 3))
            )
            or coalesce(line_sums.negative_lines, 0) > 0
        order by 1, 2
        """
    ).fetchall()
    if unbalanced:
        raise UnbalancedBillError(
            f"the bill of {month} does not balance ({stage}); nothing was sealed: "
            + describe_unbalanced(unbalanced)
        )
    assert_in_minor_units(con, month, lines, slices, stage)


def assert_in_minor_units(
    con: duckdb.DuckDBPyConnection, month: str, lines: str, slices: str, stage: str
) -> None:
    """Every line and target is a whole number of its currency's minor unit (SPEC §1.2: 1
    yen, 0.01 dollar, 0.001 dinar; digits from Babel, as the close's seed), so the `=` above
    holds in that unit and not merely in decimal(38, 3)."""
    codes = [
        row[0]
        for row in con.execute(
            f"select distinct coalesce(currency, 'USD') from {slices} order by 1"
        ).fetchall()
    ]
    if not codes:
        return
    units = ", ".join(f"({lit(code)}, {10 ** minor_unit_digits(code)})" for code in codes)
    off_unit = con.execute(
        f"""
        with units (currency, per_unit) as (values {units}),
        amounts as (
            select slices_.cluster_id, slices_.cost_family, lines_.line_id as item,
                lines_.billed_cost as amount, coalesce(slices_.currency, 'USD') as currency
            from {lines} as lines_
            inner join {slices} as slices_
                on lines_.cluster_id = slices_.cluster_id
                and lines_.cost_family = slices_.cost_family
            union all
            select cluster_id, cost_family, 'target', target_cost,
                coalesce(currency, 'USD')
            from {slices}
        )
        select amounts.cluster_id, amounts.cost_family, amounts.item, amounts.amount,
            amounts.currency
        from amounts
        inner join units on amounts.currency = units.currency
        where amounts.amount * units.per_unit <> floor(amounts.amount * units.per_unit)
        order by 1, 2, 3
        """
    ).fetchall()
    if off_unit:
        shown = "; ".join(
            f"cluster {cluster} {family}: {item} {amount} is not a whole number of "
            f"{currency}'s minor unit"
            for cluster, family, item, amount, currency in off_unit[:10]
        )
        raise UnbalancedBillError(
            f"the bill of {month} is not in its currency's minor unit ({stage}); nothing was "
            f"sealed: {shown}"
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
            cast(coalesce(line_sums.billed_cost, 0) as decimal(38, 3)) as billed_cost,
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
