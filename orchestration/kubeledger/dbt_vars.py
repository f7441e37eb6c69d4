"""Check the dbt vars a run passes before dbt sees them: dates are dates, months are months.

Models paste a few vars into SQL text (a day range, a month, an as-of date); a var that is
not exactly a date or a month is refused here with its name, and again in the macros
(macros/incremental/date_var.sql, close_month_bounds), so a user string never reaches SQL
as code.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

DATE_VARS = ("start_date", "end_date", "as_of")
MONTH_VARS = ("close_month", "reattribute_month")
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_MONTH = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")


class DbtVarError(ValueError):
    """A dbt var is not a valid date or month; the message names it."""


def parse_date(name: str, value: Any) -> dt.date:
    text = str(value).strip()
    try:
        if not _DATE.match(text):
            raise ValueError
        return dt.date.fromisoformat(text)
    except ValueError:
        raise DbtVarError(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def check_dbt_vars(dbt_vars: dict[str, Any] | None) -> dict[str, Any]:
    """Return `dbt_vars` unchanged when every date and month var is valid; else DbtVarError."""
    dbt_vars = dict(dbt_vars or {})
    dates = {}
    for name in DATE_VARS:
        if dbt_vars.get(name) not in (None, ""):
            dates[name] = parse_date(name, dbt_vars[name])
    for name in MONTH_VARS:
        value = dbt_vars.get(name)
        if value not in (None, "") and not _MONTH.match(str(value).strip()):
            raise DbtVarError(f"{name} must be a month YYYY-MM, got {value!r}")
    if "start_date" in dates and "end_date" in dates and dates["end_date"] < dates["start_date"]:
        raise DbtVarError(
            f"end_date {dates['end_date']} is before start_date {dates['start_date']}"
        )
    return dbt_vars
