"""How the month's bill is backed: invoice, rate card or estimate, in money and share.

Reconciled to invoice (SPEC §8) counts a rate-card cluster as reconciled, so a bill most of
which no invoice backs can read "reconciled 100%". The view
marts.rpt_metrics_bill_backing_monthly splits the bill (sealed, else the draft) by what each
slice rests on; this module reads it for the report, `kubeledger report`'s console summary
and `make demo`, and words it the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

import duckdb

from kubeledger.months import month_start

BACKINGS = ("invoice", "rate_card", "estimate", "invoice_and_estimate")
LABELS = {
    "invoice": "invoice",
    "rate_card": "rate card",
    "estimate": "estimate",
    "invoice_and_estimate": "invoice + estimate",
}
RELATION = "marts.rpt_metrics_bill_backing_monthly"


@dataclass(frozen=True)
class BillBacking:
    month: str
    state: str
    currency: str
    total: Decimal
    amounts: dict[str, Decimal]
    slices: dict[str, list[str]] = field(default_factory=dict)

    def share(self, backing: str) -> Decimal | None:
        """The backing's part of the bill, 0 to 1 (None for a bill of 0)."""
        return self.amounts[backing] / self.total if self.total else None

    @property
    def estimated(self) -> Decimal:
        """Money that rests, wholly or partly, on the ledger's own estimate."""
        return self.amounts["estimate"] + self.amounts["invoice_and_estimate"]

    @property
    def partly_estimated(self) -> bool:
        return self.estimated != 0

    def parts(self, money: Callable[[Decimal], str], pct: Callable[[Decimal | None], str]):
        """`[(label, "money (share)")]` for invoice, rate card, estimate, and invoice +
        estimate when any slice has it."""
        shown = [b for b in BACKINGS if b != "invoice_and_estimate" or self.amounts[b] != 0]
        return [(LABELS[b], f"{money(self.amounts[b])} ({pct(self.share(b))})") for b in shown]

    def sentences(
        self, money: Callable[[Decimal], str], pct: Callable[[Decimal | None], str]
    ) -> list[str]:
        """The words the report's first screen and the console print."""
        parts = "; ".join(f"{label} {text}" for label, text in self.parts(money, pct))
        words = [f"This bill of {money(self.total)} is backed by: {parts}."]
        if self.partly_estimated:
            estimated = [*self.slices["estimate"], *self.slices["invoice_and_estimate"]]
            share = pct(self.estimated / self.total if self.total else None)
            words.append(
                f"Partly estimated: {money(self.estimated)} ({share}) of it is the ledger's "
                f"own estimate, with no invoice or rate card behind it ({', '.join(estimated)})."
            )
        else:
            words.append("Nothing on it is an estimate.")
        if self.amounts["rate_card"]:
            words.append(
                "Reconciled to invoice counts rate-card clusters as reconciled: their "
                f"{money(self.amounts['rate_card'])} is priced from the rate card, not invoiced."
            )
        return words


def load_bill_backing(con: duckdb.DuckDBPyConnection, month: str) -> BillBacking | None:
    """The month's backing from the view, or None when the view or the month's bill is not
    there."""
    try:
        rows = con.execute(
            f"""
            select backing, bill_state, currency, billed_cost, bill_total_cost, slices
            from {RELATION} where bill_month = ? order by backing_order
            """,
            [month_start(month)],
        ).fetchall()
    except duckdb.CatalogException:
        return None
    if not rows:
        return None
    amounts = {backing: Decimal(0) for backing in BACKINGS}
    slices: dict[str, list[str]] = {backing: [] for backing in BACKINGS}
    for backing, _state, _currency, billed, _total, names in rows:
        amounts[backing] = Decimal(billed)
        slices[backing] = names.split(", ") if names else []
    _, state, currency, _, total, _ = rows[0]
    return BillBacking(month, state, currency, Decimal(total), amounts, slices)


def console_lines(backing: BillBacking | None, money: Callable[[Decimal], str]) -> list[str]:
    """The backing as the console prints it (no lines without a bill)."""
    if backing is None:
        return []

    def pct(value: Decimal | None) -> str:
        return "-" if value is None else f"{float(value) * 100:.1f}%"

    return backing.sentences(money, pct)
