"""Amounts written in their currency's minor unit (SPEC §1.2): the console's bill, the demo
summary's money cells and the report's money filter, in dollars (2 decimals), yen (0) and
Kuwaiti dinars (3). Pure functions and hand-made bills: no warehouse."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from kubeledger import report_console
from kubeledger.close import bill as bills
from kubeledger.currency import format_amount
from kubeledger.report.formatting import currency_symbol, money


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        (Decimal("310.000"), "USD", "$310.00"),
        (Decimal("31012.000"), "JPY", "¥31,012"),
        (Decimal("310.003"), "KWD", "KWD 310.003"),
        (Decimal("0.000"), "JPY", "¥0"),
        (Decimal("0"), "KWD", "KWD 0.000"),
        (Decimal("-1.5"), "USD", "-$1.50"),
        # Half up, as the close rounds (Babel alone would round half to even: ¥2).
        (Decimal("2.5"), "JPY", "¥3"),
        (Decimal("0.0005"), "KWD", "KWD 0.001"),
        (Decimal("0.125"), "USD", "$0.13"),
        (1234.5, "JPY", "¥1,235"),
    ],
)
def test_format_amount_writes_the_currencys_minor_unit(amount, currency, expected):
    assert format_amount(amount, currency) == expected


def test_the_report_money_filter_follows_the_currency():
    assert money(Decimal("1234.5"), "USD") == "$1,234.50"
    assert money(Decimal("1234.5"), "JPY") == "¥1,235"
    assert money(Decimal("1234.5"), "KWD") == "KWD 1,234.500"
    assert money(1234.5678, "KWD") == "KWD 1,234.568"
    assert money(None, "JPY") == "—"
    assert money(float("nan"), "KWD") == "—"
    assert currency_symbol("JPY") == "¥"
    assert currency_symbol("KWD") == "KWD "


def hand_made_bill(currency: str, amounts: dict[str, str], target: str) -> bills.Bill:
    """A draft bill of one slice c1/compute with the given billed amounts."""
    lines = [
        {
            "cluster_id": "c1",
            "cost_family": "compute",
            "line_key": key,
            "line_id": f"c1|compute|{key}",
            "estimated_cost": Decimal("1"),
            "exact_share": Decimal(value),
            "is_carry_cent": key == "cc-a",
            "billed_cost": Decimal(value),
            "correction_delta_cost": Decimal("0"),
            "corrected_billed_cost": Decimal(value),
        }
        for key, value in amounts.items()
    ]
    slices = [
        {
            "cluster_id": "c1",
            "cost_family": "compute",
            "currency": currency,
            "target_cost": Decimal(target),
            "is_reconciled": True,
            "basis": "invoice",
            "factor": Decimal("3.3"),
            "close_status": "ready",
            "estimated_cost": Decimal("3"),
        }
    ]
    return bills.Bill(
        month="2026-10",
        state="draft",
        bill_id=None,
        bill_status="full",
        sealed_at=None,
        lines_query="",
        lines_params=[],
        lines=lines,
        slices=slices,
    )


def test_a_yen_bill_shows_no_decimals():
    bill = hand_made_bill("JPY", {"cc-a": "10338.000", "cc-b": "10337.000"}, "20675.000")
    text = bills.table_lines(bill)
    assert any("cc-a" in line and " ¥10,338 " in line and "+1c" in line for line in text)
    assert any(" ¥20,675 " in line for line in text)  # the slice subtotal
    assert text[-1] == (
        "check: sum of lines ¥20,675 = sum of targets ¥20,675 (invoice ¥20,675 + estimated ¥0): OK"
    )
    assert not any("10338.0" in line or "10,338.0" in line for line in text)


def test_a_dinar_bill_shows_three_decimals():
    bill = hand_made_bill("KWD", {"cc-a": "103.335", "cc-b": "103.334"}, "206.669")
    text = bills.table_lines(bill)
    assert any("cc-a" in line and " KWD 103.335 " in line for line in text)
    assert text[-1] == (
        "check: sum of lines KWD 206.669 = sum of targets KWD 206.669 (invoice KWD 206.669 + "
        "estimated KWD 0.000): OK"
    )
    # The close status table writes the target in the slice's currency too.
    status = "\n".join(bills.status_table(bill.slices))
    assert "KWD 206.669" in status


def test_a_bill_off_by_one_minor_unit_is_a_mismatch_in_that_unit():
    # One fils short of the target: the check line names it (exact `=`, no tolerance).
    bill = hand_made_bill("KWD", {"cc-a": "103.335", "cc-b": "103.333"}, "206.669")
    assert bills.check_line(bill) == (
        "check: sum of lines KWD 206.668 <> sum of targets KWD 206.669 (invoice KWD 206.669 + "
        "estimated KWD 0.000): MISMATCH c1 compute"
    )


def test_the_demo_summary_writes_each_cluster_in_its_currency():
    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute("create table staging.stg_config__settings as select 'USD' as currency")
    con.execute(
        "create table staging.stg_config__clusters as "
        "select * from (values ('tokyo', 'JPY'), ('kuwait', 'KWD'), ('us', null)) "
        "as t(cluster_id, currency)"
    )
    cell = report_console.cluster_money(con)
    assert cell(1234.5, ("tokyo",)) == "¥1,235"
    assert cell(1234.5, ("kuwait",)) == "KWD 1,234.500"
    assert cell(1234.5, ("us",)) == "$1,234.50"  # no currency of its own: the default
    assert report_console.default_money(con)(7, ("x",)) == "$7.00"


def test_the_report_charts_show_amounts_at_the_minor_unit():
    from kubeledger.report import charts

    assert charts._money("USD") == ("$", ",.2f")
    assert charts._money("JPY") == ("¥", ",.0f")
    assert charts._money("KWD") == ("KWD ", ",.3f")
