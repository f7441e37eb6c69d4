"""The month an export covers, and the error an export raises (shared by writer and focus)."""

from __future__ import annotations

import datetime as dt


class ExportError(RuntimeError):
    """The export cannot be written (bad month or format, a mart missing a listed column)."""


def month_bounds(month: str) -> tuple[dt.date, dt.date]:
    try:
        if len(month) != 7:
            raise ValueError(month)
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise ExportError(f"--month must be YYYY-MM, got {month!r}") from exc
    following = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return first, following - dt.timedelta(days=1)
