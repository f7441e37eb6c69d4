"""What an owner pays, and why: `kubeledger explain --team / --cost-center / --application`.

Reads `marts.rpt_owner_bill_explained` (one row per month, bill line and owner): per cluster
and cost family, the owner's direct used cost, its own workload idle, its platform,
infrastructure-idle and other pool shares, the estimate, the slice's factor, and its part of
the billed amount on the bill of record, with the bill line IDs. The parts come from the bill
(sealed, only when it verifies; else the draft), so they add up to the cent.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import duckdb

from kubeledger import console_table
from kubeledger.close.bill import BillError, load_bill, money
from kubeledger.close.relations import find_relation
from kubeledger.months import month_start

DIMENSIONS = {"team": "team", "cost_center": "cost center", "application": "application"}
PARTS = (
    ("direct", "direct_cost"),
    ("workload idle", "workload_idle_cost"),
    ("platform", "platform_share_cost"),
    ("infra idle", "infrastructure_idle_share_cost"),
    ("other pools", "other_pools_share_cost"),
    ("unallocated", "unallocated_cost"),
)
MART = "rpt_owner_bill_explained"


@dataclass
class OwnerSlice:
    cluster_id: str
    cost_family: str
    parts: dict[str, Decimal]
    estimated_cost: Decimal
    factor: Decimal | None
    billed_cost: Decimal
    lines: list[tuple[str, Decimal, Decimal]]  # (line ID, the line's billed, the owner's part)


def _relation(con: duckdb.DuckDBPyConnection) -> str:
    relation = find_relation(con, MART)
    if relation is None:
        raise BillError(f"{MART} is not in the warehouse; build it (kubeledger build)")
    return relation


def owner_slices(
    con: duckdb.DuckDBPyConnection, month: str, dimension: str, value: str
) -> list[OwnerSlice]:
    """The owner's rows of the month's bill, one per cluster and cost family."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {', '.join(DIMENSIONS)}, got {dimension!r}")
    relation = _relation(con)
    sums = ", ".join(f"sum({column}) as {column}" for _, column in PARTS)
    rows = con.execute(
        f"""
        with mine as (
            select * from {relation} where bill_month = $month and {dimension} = $value
        ),
        lines as (
            select cluster_id, cost_family, line_id,
                min(line_billed_cost) as line_billed_cost, sum(billed_cost) as owner_billed_cost
            from mine
            group by cluster_id, cost_family, line_id
        ),
        line_totals as (
            select cluster_id, cost_family,
                list(
                    struct_pack(line_id, line_billed_cost, owner_billed_cost)
                    order by encode(line_id)
                ) as lines
            from lines
            group by cluster_id, cost_family
        )
        select mine.cluster_id, mine.cost_family, {sums},
            sum(mine.estimated_cost) as estimated_cost,
            min(mine.factor) as factor_low, max(mine.factor) as factor_high,
            sum(mine.billed_cost) as billed_cost,
            min(line_totals.lines) as lines
        from mine
        inner join line_totals
            on mine.cluster_id = line_totals.cluster_id
            and mine.cost_family = line_totals.cost_family
        group by mine.cluster_id, mine.cost_family
        order by encode(mine.cluster_id), encode(mine.cost_family)
        """,
        {"month": month_start(month), "value": value},
    ).fetchall()
    out = []
    for row in rows:
        cluster, family, *values = row
        parts = dict(zip([column for _, column in PARTS], values[: len(PARTS)], strict=True))
        estimate, factor, _high, billed, lines = values[len(PARTS) :]
        out.append(
            OwnerSlice(
                cluster_id=cluster,
                cost_family=family,
                parts=parts,
                estimated_cost=estimate,
                factor=factor,
                billed_cost=billed,
                lines=[
                    (line["line_id"], line["line_billed_cost"], line["owner_billed_cost"])
                    for line in lines
                ],
            )
        )
    return out


def _amount(value: Decimal) -> str:
    return f"{value:,.2f}"


def explain_owner(
    con: duckdb.DuckDBPyConnection, month: str, dimension: str, value: str
) -> list[str]:
    """The owner's bill for the month, taken apart per cluster and cost family, as text."""
    bill = load_bill(con, month)
    currency = bill.currency
    slices = owner_slices(con, month, dimension, value)
    label = f"{DIMENSIONS[dimension]} {value}"
    if not slices:
        known = con.execute(
            f"select distinct {dimension} from {_relation(con)} where bill_month = ? "
            f"order by 1 limit 10",
            [month_start(month)],
        ).fetchall()
        raise BillError(
            f"{label} has nothing on the {bill.state} bill of {month}; "
            f"{DIMENSIONS[dimension]}s on it include: {', '.join(row[0] for row in known)}"
        )
    state = (
        f"SEALED bill {bill.bill_id}"
        if bill.state == "sealed"
        else "DRAFT bill - not sealed, may still change"
    )
    headers = ["cluster", "family", *[title for title, _ in PARTS], "estimate", "factor", "billed"]
    rows = []
    totals = {column: Decimal(0) for _, column in PARTS}
    estimate_total, billed_total = Decimal(0), Decimal("0.00")
    for item in slices:
        factor = "-" if item.factor is None else f"{Decimal(item.factor):.4f}"
        rows.append(
            [
                item.cluster_id,
                item.cost_family,
                *[_amount(item.parts[column]) for _, column in PARTS],
                _amount(item.estimated_cost),
                factor,
                money(item.billed_cost, currency),
            ]
        )
        for _, column in PARTS:
            totals[column] += item.parts[column]
        estimate_total += item.estimated_cost
        billed_total += item.billed_cost
    rows.append(
        [
            "total",
            "",
            *[_amount(totals[column]) for _, column in PARTS],
            _amount(estimate_total),
            "",
            money(billed_total, currency),
        ]
    )
    numeric = set(range(2, len(headers)))
    out = [f"{label} on the {state} of {month}:"]
    out += console_table.table_lines(headers, rows, numeric=numeric)
    out.append(f"bill lines (part of each line for {label}):")
    for item in slices:
        for line_id, line_billed, part in item.lines:
            whole = part == line_billed
            out.append(
                f"  {line_id}: {money(part, currency)}"
                + (
                    " (the whole line)"
                    if whole
                    else f" of the line's {money(line_billed, currency)}"
                )
            )
    line_count = sum(len(item.lines) for item in slices)
    out.append(
        f"check: {label} billed {money(billed_total, currency)} = the sum of its parts of "
        f"{line_count} bill line(s); estimate {_amount(estimate_total)} = direct + idle + "
        "shares (the columns above); billed = estimate x factor, rounded to the cent"
    )
    return out


def line_split(con: duckdb.DuckDBPyConnection, month: str, line_id: str) -> list[str]:
    """The owners on one bill line, each with its split and its part of the billed amount."""
    relation = find_relation(con, MART)
    if relation is None:
        return [f"  owners: {MART} is not in the warehouse"]
    currency = load_bill(con, month).currency  # before the query below: one cursor
    cursor = con.execute(
        f"select * from {relation} where bill_month = ? and line_id = ? "
        "order by billed_cost desc, encode(owner_line_id)",
        [month_start(month), line_id],
    )
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    headers = ["team", "application", *[title for title, _ in PARTS], "estimate", "billed"]
    cells = [
        [
            row["team"] if row["owner_status"] == "owned" else row["owner_status"],
            row["application"],
            *[_amount(row[column]) for _, column in PARTS],
            _amount(row["estimated_cost"]),
            money(row["billed_cost"], currency),
        ]
        for row in rows
    ]
    total = sum((row["billed_cost"] for row in rows), Decimal("0.00"))
    out = ["  owners on the line (month's ledger cost, taken apart; billed part of the line):"]
    out += [
        f"    {text}"
        for text in console_table.table_lines(headers, cells, numeric=set(range(2, len(headers))))
    ]
    out.append(f"    owners' parts sum to {money(total, currency)}")
    return out
