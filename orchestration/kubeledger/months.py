"""How a month is named (models/docs.md, the vocabulary): `YYYY-MM` text on the command line
(`--month 2026-10`), in the sealed store and in bill and line IDs; a `date`, the first day of
the month, in every mart. Queries on a mart's month column pass `month_start(month)`."""

from __future__ import annotations

import datetime as dt


def month_start(month: str) -> dt.date:
    """The first day of a `YYYY-MM` month: the value of a mart's month column."""
    return dt.date.fromisoformat(f"{month}-01")


def month_text(value: dt.date | str) -> str:
    """The `YYYY-MM` name of a month given as a mart's date or as text."""
    if isinstance(value, dt.date):
        return value.strftime("%Y-%m")
    return str(value)[:7]
