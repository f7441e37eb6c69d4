"""The cent allocation (macro allocate_cents, compiled by dbt) on hand-checkable cases."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from tests.test_close_support import close_project, compile_inline  # noqa: F401

ALLOCATE = """
{{ allocate_cents(
    'report_lines', ['report_id'],
    line_id='line_id', estimate='estimate', target='target',
    is_unassigned='is_unassigned', unassigned_policy='policy',
) }}
"""


@pytest.fixture(scope="module")
def allocation_sql(close_project, tmp_path_factory) -> str:  # noqa: F811
    db = tmp_path_factory.mktemp("cents") / "compile.duckdb"
    return compile_inline(close_project, db, ALLOCATE)


def allocate(sql: str, lines: list[tuple], target: str, policy: str = "separate") -> dict:
    """Allocate one report: lines are (line_id, estimate[, is_unassigned])."""
    con = duckdb.connect()
    con.execute(
        "create table report_lines (report_id integer, line_id varchar, "
        "estimate decimal(38, 6), target decimal(38, 2), is_unassigned boolean, policy varchar)"
    )
    for line in lines:
        line_id, estimate = line[0], line[1]
        unassigned = line[2] if len(line) > 2 else line_id.endswith("__unassigned__")
        con.execute(
            "insert into report_lines values (1, ?, ?, ?, ?, ?)",
            [line_id, estimate, target, unassigned, policy],
        )
    rows = con.execute(
        f"select line_id, billed_cost, is_carry_cent, exact_share from ({sql}) as allocated"
    ).fetchall()
    types = {
        row[0]
        for row in con.execute(f"select typeof(billed_cost) from ({sql}) as allocated").fetchall()
    }
    assert types == {"DECIMAL(38,3)"}  # bill money (SPEC §1.2)
    return {line_id: (billed, carry, share) for line_id, billed, carry, share in rows}


def billed(result: dict) -> dict[str, str]:
    """Billed amounts as cents text; bill money is decimal(38, 3) (SPEC §1.2), so each amount
    of a two-decimal currency must have 0 in its third decimal."""
    cents = Decimal("0.01")
    for line_id, values in result.items():
        assert values[0] == values[0].quantize(cents), (line_id, values[0])
    return {line_id: str(values[0].quantize(cents)) for line_id, values in result.items()}


def test_reference_cent_example(allocation_sql):
    # Three lines of 1.00, an invoice of 10.00: each 3.333... rounds down to 3.33, the one
    # leftover cent goes to the largest estimate, a three-way tie -> the smallest line ID.
    result = allocate(
        allocation_sql,
        [
            ("c1|compute|b", "1.00"),
            ("c1|compute|a", "1.00"),
            ("c1|compute|c", "1.00"),
            ("c1|compute|__unassigned__", "0"),
        ],
        "10.00",
    )
    assert billed(result) == {
        "c1|compute|a": "3.34",
        "c1|compute|b": "3.33",
        "c1|compute|c": "3.33",
        "c1|compute|__unassigned__": "0.00",
    }
    assert [line for line, values in result.items() if values[1]] == ["c1|compute|a"]
    assert result["c1|compute|b"][2] == Decimal("3.3333333333")


def test_four_cent_lines_against_two_cents_never_go_negative(allocation_sql):
    # Carrying the whole remainder to one line would bill -0.01 somewhere; one cent each
    # to the largest estimates (a four-way tie: the two smallest IDs) cannot.
    result = allocate(
        allocation_sql,
        [
            ("x|compute|d", "0.01"),
            ("x|compute|c", "0.01"),
            ("x|compute|b", "0.01"),
            ("x|compute|a", "0.01"),
            ("x|compute|__unassigned__", "0"),
        ],
        "0.02",
    )
    assert billed(result) == {
        "x|compute|a": "0.01",
        "x|compute|b": "0.01",
        "x|compute|c": "0.00",
        "x|compute|d": "0.00",
        "x|compute|__unassigned__": "0.00",
    }


def test_largest_estimate_takes_the_cent_not_the_smallest_id(allocation_sql):
    # 1.00 / 2.00 against 1.00: exact 0.3333 / 0.6666 -> 0.33 / 0.66, one cent left, to the
    # larger estimate (b) although a has the smaller ID.
    result = allocate(
        allocation_sql,
        [("k|compute|a", "1.00"), ("k|compute|b", "2.00"), ("k|compute|__unassigned__", "0")],
        "1.00",
    )
    assert billed(result) == {
        "k|compute|a": "0.33",
        "k|compute|b": "0.67",
        "k|compute|__unassigned__": "0.00",
    }


def test_ties_are_broken_byte_wise_not_by_locale(allocation_sql):
    # Upper case sorts before lower case byte-wise ('B' 0x42 < 'a' 0x61): B takes the cent.
    result = allocate(
        allocation_sql,
        [("k|compute|a", "1.00"), ("k|compute|B", "1.00"), ("k|compute|__unassigned__", "0")],
        "0.01",
    )
    assert billed(result) == {
        "k|compute|B": "0.01",
        "k|compute|a": "0.00",
        "k|compute|__unassigned__": "0.00",
    }


def test_zero_invoice_bills_every_line_zero(allocation_sql):
    result = allocate(
        allocation_sql,
        [("z|compute|a", "12.50"), ("z|compute|b", "7.25"), ("z|compute|__unassigned__", "3")],
        "0.00",
    )
    assert set(billed(result).values()) == {"0.00"}


def test_invoice_with_nothing_attributed_goes_to_unassigned(allocation_sql):
    # The agent was down all month: the invoice is real money, billed whole to __unassigned__.
    result = allocate(
        allocation_sql,
        [("n|compute|a", "0"), ("n|compute|__unassigned__", "0")],
        "812.37",
    )
    assert billed(result) == {"n|compute|a": "0.00", "n|compute|__unassigned__": "812.37"}


def test_negative_estimates_are_clipped_not_billed_negative(allocation_sql):
    # A -5.00 line (a credit booked to one owner) counts as 0: a and b share 9.00 as 1:2.
    result = allocate(
        allocation_sql,
        [
            ("m|compute|a", "1.00"),
            ("m|compute|b", "2.00"),
            ("m|compute|c", "-5.00"),
            ("m|compute|__unassigned__", "0"),
        ],
        "9.00",
    )
    assert billed(result) == {
        "m|compute|a": "3.00",
        "m|compute|b": "6.00",
        "m|compute|c": "0.00",
        "m|compute|__unassigned__": "0.00",
    }


def test_proportional_policy_spreads_unassigned_before_rounding(allocation_sql):
    # __unassigned__ 1.00 spread over a (1.00) and b (2.00) by estimate: a and b share the
    # whole 10.00 as 1:2 -> 3.333 / 6.666 -> 3.33 / 6.66 + the cent to b (largest) -> 6.67.
    lines = [("p|compute|a", "1.00"), ("p|compute|b", "2.00"), ("p|compute|__unassigned__", "1.00")]
    proportional = allocate(allocation_sql, lines, "10.00", policy="proportional")
    assert billed(proportional) == {
        "p|compute|a": "3.33",
        "p|compute|b": "6.67",
        "p|compute|__unassigned__": "0.00",
    }
    separate = allocate(allocation_sql, lines, "10.00", policy="separate")
    assert billed(separate) == {
        "p|compute|a": "2.50",
        "p|compute|b": "5.00",
        "p|compute|__unassigned__": "2.50",
    }


def test_proportional_policy_with_no_other_line_keeps_unassigned(allocation_sql):
    result = allocate(
        allocation_sql,
        [("q|compute|a", "0"), ("q|compute|__unassigned__", "4.00")],
        "6.00",
        policy="proportional",
    )
    assert billed(result) == {"q|compute|a": "0.00", "q|compute|__unassigned__": "6.00"}


def test_tiny_estimates_against_a_large_invoice_balance(allocation_sql):
    result = allocate(
        allocation_sql,
        [
            ("t|compute|a", "0.000001"),
            ("t|compute|b", "0.000002"),
            ("t|compute|c", "0.000004"),
            ("t|compute|__unassigned__", "0"),
        ],
        "1000000.00",
    )
    # exact: 142857.142857..., 285714.285714..., 571428.571428... -> .14 / .28 / .57, and
    # the one leftover cent to c, the largest.
    assert billed(result) == {
        "t|compute|a": "142857.14",
        "t|compute|b": "285714.28",
        "t|compute|c": "571428.58",
        "t|compute|__unassigned__": "0.00",
    }


def test_decimal_divide_is_exact_and_rounds_down(close_project, tmp_path):  # noqa: F811
    sql = compile_inline(
        close_project,
        tmp_path / "compile.duckdb",
        "select {{ decimal_divide('cast(2 as decimal(38, 6))', 'cast(3 as decimal(38, 6))') }}"
        " as two_thirds, {{ decimal_divide('cast(-2 as decimal(38, 6))', "
        "'cast(3 as decimal(38, 6))', 2) }} as minus_two_thirds, "
        "{{ decimal_divide('cast(1 as decimal(38, 2))', 'cast(0 as decimal(38, 2))') }} "
        "as by_zero, {{ decimal_divide('cast(999999999.999999 as decimal(38, 6)) "
        "* cast(99999999.99 as decimal(38, 2))', 'cast(999999999.999999 as decimal(38, 6))', 2) }}"
        " as big",
    )
    con = duckdb.connect()
    row = con.execute(sql).fetchone()
    types = con.execute(f"select typeof(two_thirds), typeof(big) from ({sql})").fetchone()
    assert row == (Decimal("0.6666666666"), Decimal("-0.67"), None, Decimal("99999999.99"))
    assert types == ("DECIMAL(38,10)", "DECIMAL(38,2)")


def test_decimal_divide_half_up_rounds_a_shown_factor(close_project, tmp_path):  # noqa: F811
    """A factor is shown rounded half up to its 10 places, never cut: a $7.00 target over a
    $6.00 estimate is 1.16666666666… -> 1.1666666667 (floor: …6666); 2/3 -> 0.6666666667;
    -2/3 at 2 places -> -0.67 (-0.6666… is nearer -0.67); 1/8 at 2 places (0.125, a half)
    -> 0.13; -1/8 -> -0.12 (half up is toward plus infinity); 6/3 exact -> 2.00."""
    cases = {
        "factor": ("cast(7 as decimal(38, 2))", "cast(6 as decimal(38, 2))", 10),
        "two_thirds": ("cast(2 as decimal(38, 6))", "cast(3 as decimal(38, 6))", 10),
        "minus_two_thirds": ("cast(-2 as decimal(38, 6))", "cast(3 as decimal(38, 6))", 2),
        "eighth": ("cast(1 as decimal(38, 2))", "cast(8 as decimal(38, 2))", 2),
        "minus_eighth": ("cast(1 as decimal(38, 2))", "cast(-8 as decimal(38, 2))", 2),
        "exact": ("cast(6 as decimal(38, 2))", "cast(3 as decimal(38, 2))", 2),
    }
    columns = ", ".join(
        f"{{{{ decimal_divide('{n}', '{d}', {s}, rounding='half_up') }}}} as {name}"
        for name, (n, d, s) in cases.items()
    )
    sql = compile_inline(close_project, tmp_path / "compile.duckdb", f"select {columns}")
    row = duckdb.connect().execute(sql).fetchone()
    assert row == (
        Decimal("1.1666666667"),
        Decimal("0.6666666667"),
        Decimal("-0.67"),
        Decimal("0.13"),
        Decimal("-0.12"),
        Decimal("2.00"),
    )
