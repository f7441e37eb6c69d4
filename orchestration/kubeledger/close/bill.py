"""Reading a month's bill (sealed, else the draft) and explaining one of its lines.

A sealed month is read from schema `sealed` (the bill of record, with its corrections); a
month not sealed is read from the close models of the last build and marked DRAFT. Amounts
stay `Decimal` end to end, so the check line compares the lines' sum with the targets exactly.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import duckdb

from kubeledger import console_table
from kubeledger.close.relations import find_relation
from kubeledger.close.seal import SCHEMA, VerificationError, corrections_of, sealed_bill
from kubeledger.close.verify import require_verified
from kubeledger.currency import format_amount

LINE_COLUMNS = (
    "bill_month",
    "bill_state",
    "bill_id",
    "cluster_id",
    "cost_family",
    "line_key",
    "line_id",
    "is_unassigned",
    "estimated_cost",
    "exact_share",
    "is_carry_cent",
    "billed_cost",
    "correction_delta_cost",
    "corrected_billed_cost",
)


STATUS_COLUMNS = (
    ("cluster", "cluster_id"),
    ("family", "cost_family"),
    ("status", "close_status"),
    ("basis", "basis"),
    ("target", "target_cost"),
    ("estimate", "estimated_cost"),
    ("factor", "factor"),
    ("invoice factor", "invoice_factor"),
    ("days missing", "days_missing"),
    ("reason", "reason"),
)


class BillError(RuntimeError):
    """The month has no bill to show (or the line is not in it); the message says why."""


class UnverifiedBillError(BillError):
    """The month is sealed but fails verification: it is not presented."""


@dataclass
class Bill:
    month: str
    state: str  # sealed | draft
    bill_id: str | None
    bill_status: str  # full | partial | none (for a draft: what it would seal as now)
    sealed_at: object | None
    lines_query: str
    lines_params: list
    lines: list[dict]
    slices: list[dict]
    corrections: list[dict] = field(default_factory=list)

    @property
    def billed_total(self) -> Decimal:
        return sum((Decimal(line["billed_cost"]) for line in self.lines), Decimal("0.00"))

    @property
    def target_total(self) -> Decimal:
        return sum((Decimal(row["target_cost"]) for row in self.slices), Decimal("0.00"))

    @property
    def corrected_total(self) -> Decimal:
        return sum((Decimal(line["corrected_billed_cost"]) for line in self.lines), Decimal("0.00"))

    @property
    def currencies(self) -> list[str]:
        """The slices' currencies (one for a bill the close accepts)."""
        return sorted({row["currency"] for row in self.slices if row.get("currency")})

    @property
    def currency(self) -> str:
        """The bill's currency (SPEC §1.2): its amounts are shown at that currency's unit."""
        found = self.currencies
        return found[0] if found else "USD"

    def currency_of(self, cluster_id: str, cost_family: str) -> str:
        for row in self.slices:
            if row["cluster_id"] == cluster_id and row["cost_family"] == cost_family:
                return row.get("currency") or self.currency
        return self.currency

    def unbalanced_slices(self) -> list[str]:
        sums: dict[tuple[str, str], Decimal] = {}
        for line in self.lines:
            key = (line["cluster_id"], line["cost_family"])
            sums[key] = sums.get(key, Decimal("0.00")) + Decimal(line["billed_cost"])
        return [
            f"{row['cluster_id']} {row['cost_family']}"
            for row in self.slices
            if sums.get((row["cluster_id"], row["cost_family"]), Decimal("0.00"))
            != Decimal(row["target_cost"])
        ]


def load_bill(con: duckdb.DuckDBPyConnection, month: str) -> Bill:
    """The month's bill: the sealed one when sealed (and only if it verifies), else the draft
    of the last build."""
    sealed = sealed_bill(con, month)
    if sealed is not None:
        try:
            require_verified(con, month)
        except VerificationError as exc:
            raise UnverifiedBillError(str(exc)) from exc
        return _sealed(con, month, sealed)
    return _draft(con, month)


def _rows(con: duckdb.DuckDBPyConnection, query: str, params: list) -> list[dict]:
    cursor = con.execute(query, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _sealed(con: duckdb.DuckDBPyConnection, month: str, sealed: dict) -> Bill:
    bill_id = sealed["bill_id"]
    query = f"""
        with corrections as (
            select line_id, min(cluster_id) as cluster_id, min(cost_family) as cost_family,
                min(line_key) as line_key, sum(delta_cost) as delta_cost
            from {SCHEMA}.correction_bill_lines
            where bill_id = $bill_id
            group by line_id
        )
        select
            $month as bill_month,
            'sealed' as bill_state,
            $bill_id as bill_id,
            coalesce(lines.cluster_id, corrections.cluster_id) as cluster_id,
            coalesce(lines.cost_family, corrections.cost_family) as cost_family,
            coalesce(lines.line_key, corrections.line_key) as line_key,
            coalesce(lines.line_id, corrections.line_id) as line_id,
            coalesce(lines.is_unassigned, corrections.line_key = '__unassigned__')
                as is_unassigned,
            coalesce(lines.estimated_cost, 0) as estimated_cost,
            coalesce(lines.exact_share, 0) as exact_share,
            coalesce(lines.is_carry_cent, false) as is_carry_cent,
            cast(coalesce(lines.billed_cost, 0) as decimal(38, 3)) as billed_cost,
            cast(coalesce(corrections.delta_cost, 0) as decimal(38, 3)) as correction_delta_cost,
            cast(coalesce(lines.billed_cost, 0) + coalesce(corrections.delta_cost, 0)
                as decimal(38, 3)) as corrected_billed_cost
        from (select * from {SCHEMA}.sealed_bill_lines where bill_id = $bill_id) as lines
        full outer join corrections on lines.line_id = corrections.line_id
        order by encode(coalesce(lines.cluster_id, corrections.cluster_id)),
            encode(coalesce(lines.cost_family, corrections.cost_family)),
            coalesce(lines.is_unassigned, corrections.line_key = '__unassigned__'),
            encode(coalesce(lines.line_id, corrections.line_id))
    """
    params = {"bill_id": bill_id, "month": month}
    cursor = con.execute(query, params)
    names = [column[0] for column in cursor.description]
    lines = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    slices = _rows(
        con,
        f"select * from {SCHEMA}.sealed_bill_clusters where bill_id = ? "
        "order by encode(cluster_id), encode(cost_family)",
        [bill_id],
    )
    return Bill(
        month=month,
        state="sealed",
        bill_id=bill_id,
        bill_status=sealed["bill_status"],
        sealed_at=sealed["sealed_at"],
        lines_query=query,
        lines_params=params,
        lines=lines,
        slices=slices,
        corrections=corrections_of(con, month),
    )


def _draft(con: duckdb.DuckDBPyConnection, month: str) -> Bill:
    lines_relation = find_relation(con, "int_bill_lines_allocated")
    slices_relation = find_relation(con, "int_bill_targets_monthly")
    if lines_relation is None or slices_relation is None:
        raise BillError(
            f"month {month} is not sealed and the warehouse has no draft bill yet; build it "
            "(kubeledger build) or close it (kubeledger close --month)"
        )
    query = f"""
        select
            bill_month,
            'draft' as bill_state,
            cast(null as varchar) as bill_id,
            cluster_id,
            cost_family,
            line_key,
            line_id,
            is_unassigned,
            estimated_cost,
            exact_share,
            is_carry_cent,
            billed_cost,
            cast(0 as decimal(38, 3)) as correction_delta_cost,
            billed_cost as corrected_billed_cost
        from {lines_relation}
        where bill_month = $month
        order by encode(cluster_id), encode(cost_family), is_unassigned, encode(line_id)
    """
    params = {"month": month}
    cursor = con.execute(query, params)
    names = [column[0] for column in cursor.description]
    lines = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    slices = _rows(
        con,
        f"select * from {slices_relation} where bill_month = ? "
        "order by encode(cluster_id), encode(cost_family)",
        [month],
    )
    if not lines and not slices:
        raise BillError(
            f"month {month} has no bill: nothing in the warehouse for it (is it loaded and built?)"
        )
    reconciled = sum(1 for row in slices if row["is_reconciled"])
    status = "full" if reconciled == len(slices) else "none" if reconciled == 0 else "partial"
    return Bill(
        month=month,
        state="draft",
        bill_id=None,
        bill_status=status,
        sealed_at=None,
        lines_query=query,
        lines_params=params,
        lines=lines,
        slices=slices,
    )


# --- rendering -------------------------------------------------------------------------------


def money(value: object, currency: str | None) -> str:
    """An amount in its currency at the currency's minor unit: `$310.00`, `¥310`, `KWD 1.250`."""
    return format_amount(Decimal(value), currency)


def currency_of_rows(rows: list[dict]) -> str:
    """The currency of close-status or slice rows (the first that names one; USD if none)."""
    return next((row["currency"] for row in rows if row.get("currency")), "USD")


def header_lines(bill: Bill) -> list[str]:
    if bill.state == "sealed":
        when = f"{bill.sealed_at:%Y-%m-%d %H:%M} UTC" if bill.sealed_at else "?"
        text = [f"bill {bill.month}: SEALED as {bill.bill_id} on {when}, status {bill.bill_status}"]
        for correction in bill.corrections:
            text.append(
                f"  correction {correction['correction_number']} "
                f"({correction['correction_id']}, {correction['sealed_at']:%Y-%m-%d}): "
                f"{correction['changed_line_count']} lines, "
                f"delta {money(correction['delta_cost'], bill.currency)}"
            )
        return text
    blocked = [row for row in bill.slices if row["close_status"] == "blocked"]
    text = [
        f"bill {bill.month}: DRAFT - not sealed, these numbers may still change "
        f"(would seal {bill.bill_status} now)"
    ]
    for row in blocked:
        text.append(f"  blocked: {row['cluster_id']} {row['cost_family']} ({row['reason']})")
    return text


def check_line(bill: Bill) -> str:
    """The final line of every bill: the lines' sum against the targets, exactly."""
    billed, target = bill.billed_total, bill.target_total
    invoice = sum(
        (Decimal(row["target_cost"]) for row in bill.slices if row["is_reconciled"]),
        Decimal("0.00"),
    )
    estimated = target - invoice
    unbalanced = bill.unbalanced_slices()
    verdict = "OK" if billed == target and not unbalanced else "MISMATCH " + ", ".join(unbalanced)
    cur = bill.currency
    text = (
        f"check: sum of lines {money(billed, cur)} {'=' if billed == target else '<>'} "
        f"sum of targets {money(target, cur)} (invoice {money(invoice, cur)} + estimated "
        f"{money(estimated, cur)}): {verdict}"
    )
    if bill.corrections:
        text += f"; with corrections {money(bill.corrected_total, cur)}"
    if len(bill.currencies) > 1:
        text += (
            f"; MIXED currencies {', '.join(bill.currencies)}: a bill is in one currency and "
            "the close refuses this month"
        )
    return text


def table_lines(bill: Bill) -> list[str]:
    """The bill as a text table, a subtotal per slice, then the check line."""
    corrected = bool(bill.corrections)
    headers = ["cluster", "family", "line", "estimate", "billed", "cent"]
    if corrected:
        headers += ["correction", "corrected"]
    rows: list[list[str]] = []
    slices = {(row["cluster_id"], row["cost_family"]): row for row in bill.slices}
    current: tuple[str, str] | None = None
    subtotal = Decimal("0.00")

    def close_slice() -> None:
        if current is None:
            return
        row = slices.get(current, {})
        factor = row.get("factor")
        rows.append(
            [
                "",
                "",
                f"= slice {row.get('basis', '?')}, factor "
                f"{'-' if factor is None else f'{Decimal(factor):.4f}'}, {row.get('close_status')}",
                "",
                money(subtotal, bill.currency_of(*current)),
                "",
            ]
            + (["", ""] if corrected else [])
        )

    for line in bill.lines:
        key = (line["cluster_id"], line["cost_family"])
        if key != current:
            close_slice()
            current, subtotal = key, Decimal("0.00")
        subtotal += Decimal(line["billed_cost"])
        cur = bill.currency_of(*key)
        cells = [
            line["cluster_id"],
            line["cost_family"],
            line["line_key"],
            f"{Decimal(line['estimated_cost']):,.6f}",
            money(line["billed_cost"], cur),
            "+1c" if line["is_carry_cent"] else "",
        ]
        if corrected:
            cells += [
                money(line["correction_delta_cost"], cur),
                money(line["corrected_billed_cost"], cur),
            ]
        rows.append(cells)
    close_slice()
    out = header_lines(bill) + console_table.table_lines(headers, rows, numeric={3, 4, 6, 7})
    out.append(check_line(bill))
    return out


def csv_text(bill: Bill) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LINE_COLUMNS)
    for line in bill.lines:
        writer.writerow(["" if line[name] is None else line[name] for name in LINE_COLUMNS])
    return buffer.getvalue()


def write_parquet(con: duckdb.DuckDBPyConnection, bill: Bill, out: Path) -> None:
    """The bill's lines as Parquet, decimals kept as decimals."""
    out.parent.mkdir(parents=True, exist_ok=True)
    con.execute(
        f"create or replace temp table _bill_export as {bill.lines_query}", bill.lines_params
    )
    try:
        target = str(out).replace("'", "''")
        con.execute(f"copy _bill_export to '{target}' (format parquet)")
    finally:
        con.execute("drop table if exists _bill_export")


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def status_table(rows: list[dict]) -> list[str]:
    """Close-status rows as a text table."""
    headers = [title for title, _ in STATUS_COLUMNS]
    cells = [
        [
            money(row[name], row.get("currency"))
            if name == "target_cost" and row.get(name) is not None
            else _cell(row.get(name))
            for _, name in STATUS_COLUMNS
        ]
        for row in rows
    ]
    return console_table.table_lines(headers, cells)


# --- explain ---------------------------------------------------------------------------------


def explain_line(con: duckdb.DuckDBPyConnection, month: str, line_id: str) -> list[str]:
    """Everything behind one bill line, as text."""
    bill = load_bill(con, month)
    line = next((row for row in bill.lines if row["line_id"] == line_id), None)
    if line is None:
        known = ", ".join(row["line_id"] for row in bill.lines[:10])
        raise BillError(
            f"line {line_id!r} is not on the {bill.state} bill of {month}; its lines include: "
            f"{known}{' ...' if len(bill.lines) > 10 else ''}"
        )
    cluster, family, key = line["cluster_id"], line["cost_family"], line["line_key"]
    cur = bill.currency_of(cluster, family)
    slice_row = next(
        (
            row
            for row in bill.slices
            if row["cluster_id"] == cluster and row["cost_family"] == family
        ),
        {},
    )
    out = [
        f"line {line_id} of the {bill.state} bill of {month}"
        + (f" ({bill.bill_id})" if bill.bill_id else ""),
        f"  estimate {Decimal(line['estimated_cost']):,.6f}, exact share "
        f"{Decimal(line['exact_share']):,.10f}, billed {money(line['billed_cost'], cur)}"
        + (
            f", corrected {money(line['corrected_billed_cost'], cur)}"
            if line["correction_delta_cost"]
            else ""
        ),
    ]
    factor = slice_row.get("factor")
    out.append(
        f"  slice {cluster} {family}: target {money(slice_row.get('target_cost', 0), cur)} on "
        f"basis {slice_row.get('basis')}, estimate "
        f"{Decimal(slice_row.get('estimated_cost', 0)):,.6f}, factor "
        f"{'-' if factor is None else f'{Decimal(factor):.6f}'}, "
        f"reconciled {slice_row.get('is_reconciled')}, status {slice_row.get('close_status')}"
        + (f" ({slice_row['reason']})" if slice_row.get("reason") else "")
    )
    out += _carry_text(bill, line)
    out += _invoice_text(con, bill, month, cluster, family)
    grain = _line_grain(con)
    out += _estimate_days_text(con, month, cluster, family, key, grain)
    out += _pods_text(con, month, cluster, key, grain, cur)
    return out


def _carry_text(bill: Bill, line: dict) -> list[str]:
    siblings = [
        row
        for row in bill.lines
        if row["cluster_id"] == line["cluster_id"] and row["cost_family"] == line["cost_family"]
    ]
    carried = sum(1 for row in siblings if row["is_carry_cent"])
    if line["is_carry_cent"]:
        return [
            f"  carried cent: yes - the slice's lines rounded down left {carried} cent(s), "
            "given one each to the largest estimates (ties: smallest line ID); this line got one"
        ]
    return [f"  carried cent: no ({carried} leftover cent(s) in the slice went elsewhere)"]


def _month_filter(column: str) -> str:
    return (
        f"{column} >= cast($month || '-01' as date) "
        f"and {column} < cast($month || '-01' as date) + interval 1 month"
    )


def _invoice_text(
    con: duckdb.DuckDBPyConnection, bill: Bill, month: str, cluster: str, family: str
) -> list[str]:
    cur = bill.currency_of(cluster, family)
    params: dict[str, object] = {"cluster": cluster, "family": family}
    if bill.state == "sealed":
        source = f"{SCHEMA}.sealed_billing_line_refs"
        where = "bill_id = $bill_id and cluster_id = $cluster and cost_family = $family"
        params["bill_id"] = bill.bill_id
        label = "sealed billing-line references"
    else:
        relation = find_relation(con, "int_billing_lines_scoped")
        if relation is None:
            return ["  invoice slice: int_billing_lines_scoped is not in the warehouse"]
        source = relation
        params["month"] = month
        where = "cluster_id = $cluster and cost_family = $family and " + _month_filter(
            "charge_date"
        )
        label = "in-scope billing lines"
    count, total = con.execute(
        f"select count(distinct billing_line_id), sum(effective_cost) from {source} where {where}",
        params,
    ).fetchone()
    out = [
        f"  invoice slice: {count} {label}, sum {money(total or 0, cur)}"
        + (
            " (rounded half-up to the currency's minor unit)"
            if count
            else " (the link selects no line)"
        )
    ]
    for resource, resource_type, cost in con.execute(
        f"select resource_key, resource_type, sum(effective_cost) as cost from {source} "
        f"where {where} group by resource_key, resource_type "
        "order by cost desc, encode(resource_key) limit 5",
        params,
    ).fetchall():
        out.append(f"    {resource} ({resource_type}): {money(cost, cur)}")
    return out


def _line_grain(con: duckdb.DuckDBPyConnection) -> str:
    relation = find_relation(con, "stg_config__settings")
    if relation is None:
        return "cost_center"
    row = con.execute(f"select bill_line_grain from {relation} limit 1").fetchone()
    return row[0] if row and row[0] in ("cost_center", "team") else "cost_center"


def _owner_filter(key: str, grain: str, *, has_status: bool) -> tuple[str, dict]:
    if key == "__unassigned__":
        status = "owner_status <> 'owned' or " if has_status else ""
        return f"({status}{grain} is null or {grain} = 'unallocated')", {}
    status = "owner_status = 'owned' and " if has_status else ""
    return f"({status}{grain} = $key)", {"key": key}


def _estimate_days_text(
    con: duckdb.DuckDBPyConnection, month: str, cluster: str, family: str, key: str, grain: str
) -> list[str]:
    relation = find_relation(con, "fct_owner_costs_daily")
    if relation is None:
        return ["  estimate per day: fct_owner_costs_daily is not in the warehouse"]
    owner, params = _owner_filter(key, grain, has_status=True)
    params.update(month=month, cluster=cluster, family=family)
    rows = con.execute(
        f"""
        select usage_date, sum(total_cost) as cost
        from {relation}
        where cluster_id = $cluster and cost_family = $family and {owner}
            and {_month_filter("usage_date")}
        group by usage_date
        order by usage_date
        """,
        params,
    ).fetchall()
    total = sum(cost for _, cost in rows)
    out = [
        f"  estimate per day ({family}, by {grain}, from the ledger as it is now; "
        f"{len(rows)} days, total {total:,.6f}):"
    ]
    out += [f"    {day:%Y-%m-%d}  {cost:,.6f}" for day, cost in rows]
    return out


def _pods_text(
    con: duckdb.DuckDBPyConnection, month: str, cluster: str, key: str, grain: str, cur: str
) -> list[str]:
    relation = find_relation(con, "fct_pod_costs_daily")
    if relation is None:
        return [
            "  pods, namespaces, nodes: fct_pod_costs_daily is not in the warehouse, so "
            "the workloads behind the line cannot be listed"
        ]
    owner, params = _owner_filter(key, grain, has_status=False)
    params.update(month=month, cluster=cluster)
    out = [f"  behind it in {cluster} this month (pod ledger cost, every family):"]
    for dimension in ("pod", "namespace", "node"):
        rows = con.execute(
            f"""
            select {dimension}, sum(total_cost) as cost
            from {relation}
            where cluster_id = $cluster and {owner} and {_month_filter("usage_date")}
            group by {dimension}
            order by cost desc, encode(coalesce({dimension}, ''))
            limit 5
            """,
            params,
        ).fetchall()
        shown = ", ".join(f"{name} {money(cost, cur)}" for name, cost in rows) or "none"
        out.append(f"    top {dimension}s: {shown}")
    return out
