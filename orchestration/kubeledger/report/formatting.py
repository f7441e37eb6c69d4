"""How the report writes values: money in its currency, percentages, factors, days, flags.
Text is returned as is (the templates escape it); a formatter that writes markup returns
`Markup`."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pandas as pd
from markupsafe import Markup

from kubeledger import currency


def currency_symbol(currency_code: str) -> str:
    """The chart axes' prefix: Babel's symbol (`$`, `¥`); a letter code takes a space."""
    symbol = currency.currency_symbol(currency_code)
    return f"{symbol} " if symbol[-1:].isalpha() else symbol


def money(value: Any, currency_code: str = "USD") -> str:
    """An amount in its currency at the currency's minor unit, as Babel writes it (SPEC §1.2):
    `$1,234.56`, `-$1.00`, `¥1,235`, `KWD 1.250`; `—` for nothing."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    amount = value if isinstance(value, Decimal) else Decimal(str(float(value)))
    return currency.format_amount(amount, currency_code)


def pct(value: Any, places: int = 1) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{float(value) * 100:.{places}f}%"


def factor(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{float(value):.6f}"


def day(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return "—"
    if isinstance(value, pd.Timestamp):
        value = value.date()
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def text(value: Any) -> str:
    """A value as text (escaped when the template writes it)."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return str(value)


def flag(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    if value == "":
        return ""
    return "✓" if bool(value) else "✗"


def warning(value: Any) -> str:
    """A flag that is bad news when set: `⚠ yes`, else `no`."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return Markup('<span class="warn-flag">⚠ yes</span>') if bool(value) else "no"
