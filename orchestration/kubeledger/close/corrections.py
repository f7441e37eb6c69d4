"""Corrections of a sealed month: new, numbered artifacts, never an overwrite (SPEC §9).

A correction (`correction_bills` / `correction_bill_lines`) is numbered per bill (UNIQUE
(bill_id, correction_number)) and holds the per-line delta between the month recomputed now
and the bill as sealed plus the earlier corrections. It is hashed, chained and copied like a
bill (digest.py).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb

from kubeledger.close import digest
from kubeledger.close.sealed_schema import (
    LEDGER_VERSION,
    SCHEMA,
    CorrectionBill,
    SealError,
    SealSources,
    UnbalancedBillError,
    rollback_quietly,
    sealed_bill,
    utc_now,
)
from kubeledger.close.store import (
    assert_balanced,
    describe_unbalanced,
    drop_staging,
    refuse_blocked,
    stage,
)


def seal_correction(
    con: duckdb.DuckDBPyConnection,
    month: str,
    sources: SealSources,
    *,
    as_of: dt.date,
    ledger_version: str = LEDGER_VERSION,
    sealed_at: dt.datetime | None = None,
    publish: digest.Publisher | None = None,
) -> CorrectionBill | None:
    """Seal the delta between the month recomputed now and its bill as sealed and corrected.

    Returns None (and writes nothing) when no line changed. The recomputed month must balance
    and have no blocked slice, like a close. `publish` is called with the pending copy just
    before the commit, as in store.seal_month.
    """
    sealed_at = sealed_at or utc_now()
    bill = sealed_bill(con, month)
    if bill is None:
        raise SealError(
            f"month {month} is not sealed, so there is nothing to correct; close it first: "
            f"kubeledger close --month {month}"
        )
    bill_id = bill["bill_id"]
    copy: digest.PendingCopy | None = None
    con.execute("begin transaction")
    try:
        stage(con, month, sources)
        refuse_blocked(con, month)
        assert_balanced(con, month, "_seal_lines", "_seal_slices", "recomputed")
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
                cast(coalesce(current_lines.billed_cost, 0) as decimal(38, 3))
                    as previous_billed_cost,
                cast(coalesce(recomputed.billed_cost, 0) as decimal(38, 3))
                    as recomputed_billed_cost,
                cast(
                    coalesce(recomputed.billed_cost, 0) - coalesce(current_lines.billed_cost, 0)
                    as decimal(38, 3)
                ) as delta_cost,
                cast(coalesce(recomputed.estimated_cost, 0) as decimal(38, 6))
                    as recomputed_estimated_cost,
                cast(
                    coalesce(recomputed.target_cost, recomputed_slices.target_cost, 0)
                    as decimal(38, 3)
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
            select ?, ?, ?, ?, cast(? as decimal(38, 3)), ?, cast(? as date),
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
                "nothing was written: " + describe_unbalanced(unbalanced)
            )
        copy = digest.write_copy(
            con,
            kind="correction",
            artifact_id=correction_id,
            bill_id=bill_id,
            month=month,
            sealed_at=sealed_at,
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
    return CorrectionBill(
        correction_id=correction_id,
        bill_id=bill_id,
        bill_month=month,
        correction_number=number,
        delta_cost=Decimal(delta_total),
        changed_line_count=changed,
        sealed_at=sealed_at,
    )
