"""`make demo`'s close step: close the month, print its close status and its bill."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import duckdb

from kubeledger.bill_backing import console_lines, load_bill_backing
from kubeledger.close import bill as bills
from kubeledger.close.closer import CloseError, close_month, utc_today
from kubeledger.close.seal import AlreadySealedError, SealError


def print_demo_close(
    db: Path | str, *, month: str, as_of: str | None, echo: Callable[[str], None]
) -> None:
    """`make demo`'s last step: close the month, then print its bill and the check line."""
    as_of_date = dt.date.fromisoformat(as_of) if as_of else utc_today()
    echo(f"==> closing {month} as of {as_of_date:%Y-%m-%d}")
    try:
        result = close_month(db, month, as_of_date)
    except AlreadySealedError as exc:
        echo(f"    {exc}")
    except (CloseError, SealError) as exc:
        echo(f"    not sealed: {exc}")
        for text in bills.status_table(getattr(exc, "rows", [])):
            echo(f"    {text}")
    else:
        sealed = result.bill
        for text in bills.status_table(result.slices):
            echo(f"    {text}")
        echo(
            f"    sealed as {sealed.bill_id}: status {sealed.bill_status}, "
            f"{sealed.line_count} lines"
        )
    with duckdb.connect(str(db)) as con:
        try:
            the_bill = bills.load_bill(con, month)
        except bills.BillError as exc:
            echo(f"    {exc}")
            return
        backing = load_bill_backing(con, month)
    for text in bills.summary_lines(the_bill):
        echo(text)
    echo(f"    every line, per cluster and family: kubeledger bill --month {month}")
    # how the bill is backed: invoice / rate card / estimate, partly estimated said in words
    for text in console_lines(backing, lambda amount: bills.money(amount, backing.currency)):
        echo(f"    {text}")
