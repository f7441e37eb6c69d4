"""The sealed store (kubeledger.close.seal) on hand-made bills, without dbt."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest

from kubeledger.close.seal import (
    SCHEMA,
    AlreadySealedError,
    SealError,
    SealSources,
    UnbalancedBillError,
    seal_correction,
    seal_month,
)
from tests.test_close_support import sealed_counts

MONTH = "2026-10"
AS_OF = dt.date(2026, 11, 5)
SOURCES = SealSources(lines="work.lines", slices="work.slices", billing_lines="work.billing")


def slice_row(
    cluster: str,
    target: str,
    *,
    family: str = "compute",
    estimate: str = "90",
    reconciled: bool = True,
    status: str = "ready",
    reason: str | None = None,
    factor: str | None = "1.1111111111",
) -> dict:
    return {
        "bill_month": MONTH,
        "month_start_date": dt.date(2026, 10, 1),
        "cluster_id": cluster,
        "cost_family": family,
        "currency": "USD",
        "has_billing_link": reconciled,
        "link_state": "linked" if reconciled else "no_link",
        "billing_line_count": 2,
        "invoice_cost": Decimal(target) if reconciled else None,
        "estimated_cost": Decimal(estimate),
        "target_cost": Decimal(target),
        "basis": "invoice" if reconciled else "estimate",
        "is_reconciled": reconciled,
        "factor": Decimal(factor) if factor else None,
        "invoice_factor": None,
        "factor_drift": None,
        "has_factor_drift": False,
        "close_status": status,
        "reason": reason,
        "anomaly": None,
        "days_due": 31,
        "days_missing": 0,
        "first_missing_date": None,
        "missing_dates": None,
        "unassigned_policy": "separate",
        "as_of_date": AS_OF,
        "closable_from_date": dt.date(2026, 11, 4),
        "deadline_date": dt.date(2026, 11, 10),
    }


def line_row(
    cluster: str,
    key: str,
    billed: str,
    *,
    family: str = "compute",
    estimate: str = "30",
    carry: bool = False,
) -> dict:
    return {
        "line_id": f"{cluster}|{family}|{key}",
        "bill_month": MONTH,
        "month_start_date": dt.date(2026, 10, 1),
        "cluster_id": cluster,
        "cost_family": family,
        "line_key": key,
        "is_unassigned": key == "__unassigned__",
        "estimated_cost": Decimal(estimate),
        "allocation_estimate": Decimal(estimate),
        "exact_share": Decimal(billed),
        "rounded_down_cost": Decimal(billed),
        "is_carry_cent": carry,
        "billed_cost": Decimal(billed),
    }


SLICE_TYPES = {
    "bill_month": "varchar",
    "month_start_date": "date",
    "cluster_id": "varchar",
    "cost_family": "varchar",
    "currency": "varchar",
    "has_billing_link": "boolean",
    "link_state": "varchar",
    "billing_line_count": "integer",
    "invoice_cost": "decimal(38, 3)",
    "estimated_cost": "decimal(38, 6)",
    "target_cost": "decimal(38, 3)",
    "basis": "varchar",
    "is_reconciled": "boolean",
    "factor": "decimal(38, 10)",
    "invoice_factor": "decimal(38, 10)",
    "factor_drift": "decimal(38, 10)",
    "has_factor_drift": "boolean",
    "close_status": "varchar",
    "reason": "varchar",
    "anomaly": "varchar",
    "days_due": "integer",
    "days_missing": "integer",
    "first_missing_date": "date",
    "missing_dates": "varchar",
    "unassigned_policy": "varchar",
    "as_of_date": "date",
    "closable_from_date": "date",
    "deadline_date": "date",
}
LINE_TYPES = {
    "line_id": "varchar",
    "bill_month": "varchar",
    "month_start_date": "date",
    "cluster_id": "varchar",
    "cost_family": "varchar",
    "line_key": "varchar",
    "is_unassigned": "boolean",
    "estimated_cost": "decimal(38, 6)",
    "allocation_estimate": "decimal(38, 6)",
    "exact_share": "decimal(38, 10)",
    "rounded_down_cost": "decimal(38, 3)",
    "is_carry_cent": "boolean",
    "billed_cost": "decimal(38, 3)",
}


def write_bill(con: duckdb.DuckDBPyConnection, slices: list[dict], lines: list[dict]) -> None:
    """(Re)create the work tables the seal reads, as the close models would hold them."""
    con.execute("create schema if not exists work")
    for table, types, rows in (("slices", SLICE_TYPES, slices), ("lines", LINE_TYPES, lines)):
        columns = ", ".join(f"{name} {kind}" for name, kind in types.items())
        con.execute(f"create or replace table work.{table} ({columns})")
        for row in rows:
            con.execute(
                f"insert into work.{table} values ({', '.join('?' for _ in types)})",
                [row[name] for name in types],
            )
    con.execute(
        "create or replace table work.billing as select * from (values "
        "('bl-1', 'c1', date '2026-10-03', 'compute', 'instance', 'i-1', 'matched', "
        "cast(60 as decimal(38, 10)), 'aws', 'acct'), "
        "('bl-2', 'c1', date '2026-10-04', 'compute', 'instance', 'i-1', 'matched', "
        "cast(40 as decimal(38, 10)), 'aws', 'acct'), "
        "('bl-0', 'c1', date '2026-09-30', 'compute', 'instance', 'i-1', 'matched', "
        "cast(99 as decimal(38, 10)), 'aws', 'acct')) as t(billing_line_id, cluster_id, "
        "charge_date, cost_family, resource_type, resource_key, scope_status, effective_cost, "
        "provider, billing_account_id)"
    )


def balanced_bill() -> tuple[list[dict], list[dict]]:
    slices = [
        slice_row("c1", "100.00"),
        slice_row("c2", "12.35", reconciled=False, factor="1", estimate="12.345"),
    ]
    lines = [
        line_row("c1", "cc-a", "33.34", carry=True),
        line_row("c1", "cc-b", "33.33"),
        line_row("c1", "cc-c", "33.33"),
        line_row("c1", "__unassigned__", "0.00", estimate="0"),
        line_row("c2", "cc-a", "12.35", estimate="12.345"),
        line_row("c2", "__unassigned__", "0.00", estimate="0"),
    ]
    return slices, lines


@pytest.fixture
def con(tmp_path):
    connection = duckdb.connect(str(tmp_path / "seal.duckdb"))
    yield connection
    connection.close()


def test_a_bill_seals_with_its_lines_slices_and_billing_line_references(con):
    write_bill(con, *balanced_bill())
    bill = seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    assert bill.bill_status == "partial"  # c2 has no billing link: estimated
    assert bill.estimated_clusters == ["c2"]
    assert bill.billed_cost == bill.target_cost == Decimal("112.35")
    assert sealed_counts(con) == {
        "sealed_bills": 1,
        "sealed_bill_clusters": 2,
        "sealed_bill_lines": 6,
        "sealed_billing_line_refs": 2,  # September's line is not in October's slice
        "correction_bills": 0,
        "correction_bill_lines": 0,
        "seal_digests": 1,  # the bill's hash, chained (none before it)
    }
    assert con.execute(
        f"select billed_cost from {SCHEMA}.sealed_bill_lines where line_id = 'c1|compute|cc-a'"
    ).fetchone()[0] == Decimal("33.34")


def test_the_same_inputs_give_the_same_bill_id(tmp_path):
    ids = []
    for name in ("a", "b"):
        with duckdb.connect(str(tmp_path / f"{name}.duckdb")) as connection:
            write_bill(connection, *balanced_bill())
            ids.append(seal_month(connection, MONTH, SOURCES, as_of=AS_OF).bill_id)
    assert ids[0] == ids[1] and ids[0].startswith("bill-2026-10-")


def test_a_second_seal_of_a_month_is_refused_by_the_database(con):
    write_bill(con, *balanced_bill())
    first = seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    slices, lines = balanced_bill()
    lines[1]["billed_cost"] = lines[2]["billed_cost"] = Decimal("33.33")
    write_bill(con, slices, lines)
    with pytest.raises(AlreadySealedError) as refused:
        seal_month(con, MONTH, SOURCES, as_of=AS_OF + dt.timedelta(days=1))
    message = str(refused.value)
    assert f"month 2026-10 is already sealed as bill {first.bill_id} on " in message
    assert "corrections: kubeledger correct --month 2026-10" in message
    # The refusal is the primary key's, not a check in Python.
    assert isinstance(refused.value.__cause__, duckdb.ConstraintException)
    assert "primary key" in str(refused.value.__cause__).lower()
    assert sealed_counts(con)["sealed_bills"] == 1
    assert sealed_counts(con)["sealed_bill_lines"] == 6
    # Also a raw insert behind the code's back.
    with pytest.raises(duckdb.ConstraintException):
        con.execute(
            f"insert into {SCHEMA}.sealed_bills select * replace ('bill-x' as bill_id) "
            f"from {SCHEMA}.sealed_bills"
        )


def test_a_bill_off_its_currencys_minor_unit_is_never_written(con):
    # c1 still sums to 100.00, but in fractions of a cent: 33.345 + 33.325 (SPEC §1.2).
    slices, lines = balanced_bill()
    lines[0]["billed_cost"] = Decimal("33.345")
    lines[1]["billed_cost"] = Decimal("33.325")
    write_bill(con, slices, lines)
    with pytest.raises(UnbalancedBillError) as refused:
        seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    assert str(refused.value) == (
        "the bill of 2026-10 is not in its currency's minor unit (staged); nothing was "
        "sealed: cluster c1 compute: c1|compute|cc-a 33.345 is not a whole number of USD's "
        "minor unit; cluster c1 compute: c1|compute|cc-b 33.325 is not a whole number of "
        "USD's minor unit"
    )
    assert set(sealed_counts(con).values()) == {0}
    # The same amounts in dinars (3 decimals) are whole fils: the bill seals.
    for row in slices:
        row["currency"] = "KWD"
    write_bill(con, slices, lines)
    assert seal_month(con, MONTH, SOURCES, as_of=AS_OF).billed_cost == Decimal("112.35")


def test_an_unbalanced_bill_is_never_written(con):
    slices, lines = balanced_bill()
    lines[2]["billed_cost"] = Decimal("33.34")  # c1 now sums to 100.01
    write_bill(con, slices, lines)
    with pytest.raises(UnbalancedBillError) as refused:
        seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    assert "cluster c1 compute: billed 100.010 <> target 100.000" in str(refused.value)
    assert "nothing was sealed" in str(refused.value)
    assert set(sealed_counts(con).values()) == {0}


def test_a_negative_line_or_a_slice_without_lines_is_never_written(con):
    slices, lines = balanced_bill()
    lines[0]["billed_cost"], lines[1]["billed_cost"] = Decimal("66.68"), Decimal("-0.01")
    write_bill(con, slices, lines)
    with pytest.raises(UnbalancedBillError, match="cluster c1 compute"):
        seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    slices, lines = balanced_bill()
    write_bill(con, slices + [slice_row("c3", "5.00")], lines)
    with pytest.raises(UnbalancedBillError, match="cluster c3 compute: billed None <> target"):
        seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    assert set(sealed_counts(con).values()) == {0}


def test_a_blocked_slice_is_never_sealed(con):
    slices, lines = balanced_bill()
    slices[0].update(close_status="blocked", reason="factor_out_of_bounds")
    write_bill(con, slices, lines)
    with pytest.raises(SealError, match="c1 compute: factor_out_of_bounds"):
        seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    assert set(sealed_counts(con).values()) == {0}


def test_the_database_refuses_to_drop_a_bill_its_lines_refer_to(con):
    write_bill(con, *balanced_bill())
    seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    with pytest.raises(duckdb.ConstraintException):
        con.execute(f"delete from {SCHEMA}.sealed_bills where bill_month = ?", [MONTH])
    with pytest.raises(duckdb.ConstraintException):
        con.execute(f"update {SCHEMA}.sealed_bill_lines set billed_cost = -1")
    assert sealed_counts(con)["sealed_bills"] == 1


def test_corrections_are_numbered_artifacts_that_never_touch_the_seal(con):
    write_bill(con, *balanced_bill())
    bill = seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    sealed_before = con.execute(
        f"select line_id, billed_cost from {SCHEMA}.sealed_bill_lines order by line_id"
    ).fetchall()

    # Nothing changed: no correction.
    assert seal_correction(con, MONTH, SOURCES, as_of=AS_OF) is None

    # A late restatement: c1's invoice is now 100.30; cc-a and cc-b gain 0.10 and 0.20.
    slices, lines = balanced_bill()
    slices[0]["target_cost"] = Decimal("100.30")
    lines[0]["billed_cost"], lines[1]["billed_cost"] = Decimal("33.44"), Decimal("33.53")
    write_bill(con, slices, lines)
    first = seal_correction(con, MONTH, SOURCES, as_of=AS_OF + dt.timedelta(days=20))
    assert first is not None
    assert (first.correction_id, first.correction_number) == (f"{bill.bill_id}-c1", 1)
    assert first.delta_cost == Decimal("0.30") and first.changed_line_count == 2

    # Then a new cost center appears on c2 (the draft moves 2.35 from cc-a to cc-new).
    lines[4]["billed_cost"] = Decimal("10.00")
    lines.append(line_row("c2", "cc-new", "2.35", estimate="2"))
    write_bill(con, slices, lines)
    second = seal_correction(con, MONTH, SOURCES, as_of=AS_OF + dt.timedelta(days=21))
    assert second is not None and second.correction_number == 2
    deltas = dict(
        con.execute(
            f"select line_id, delta_cost from {SCHEMA}.correction_bill_lines "
            "where correction_id = ? order by line_id",
            [second.correction_id],
        ).fetchall()
    )
    # Against the seal as already corrected: c1 does not appear again.
    assert deltas == {"c2|compute|cc-a": Decimal("-2.35"), "c2|compute|cc-new": Decimal("2.35")}

    # The sealed lines are exactly what was sealed.
    assert (
        con.execute(
            f"select line_id, billed_cost from {SCHEMA}.sealed_bill_lines order by line_id"
        ).fetchall()
        == sealed_before
    )
    assert seal_correction(con, MONTH, SOURCES, as_of=AS_OF + dt.timedelta(days=22)) is None
    # A correction of a month never sealed is refused.
    with pytest.raises(SealError, match="2026-09 is not sealed"):
        seal_correction(con, "2026-09", SOURCES, as_of=AS_OF)
