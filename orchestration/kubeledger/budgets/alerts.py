"""Which budget thresholds are crossed, and the webhook message that says so.

`crossed_budgets` reads `marts.fct_budget_status_daily` on each budget's latest status day of
its latest month (owner budgets: teams, cost centers, applications; and cloud-charge
allocations, one mechanism) and returns the budgets with a threshold crossed. `alert_payload`
turns them into one JSON message; `post_alert` POSTs it to `budgets.webhook_url`. The Dagster
asset check `budget_thresholds` (kubeledger.dagster.checks_budgets) runs both.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from dataclasses import asdict, dataclass
from decimal import Decimal

import duckdb

from kubeledger.close.relations import find_relation

MART = "fct_budget_status_daily"


class BudgetAlertError(RuntimeError):
    """The budget status cannot be read, or the webhook refused the message."""


@dataclass(frozen=True)
class CrossedBudget:
    budget_name: str
    budget_kind: str
    owner_value: str
    budget_month: str  # YYYY-MM-DD, the first of the month
    status_date: str
    currency: str
    monthly_budget: str
    used_cost: str
    forecast_cost: str
    used_basis: str
    used_pct_of_budget: float | None
    forecast_pct_of_budget: float | None
    thresholds_crossed: str
    newly_crossed: str | None


def _text(value: object) -> str:
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def crossed_budgets(
    con: duckdb.DuckDBPyConnection, as_of: dt.date | None = None
) -> list[CrossedBudget]:
    """Budgets with a threshold crossed on their latest status day (on or before `as_of`)."""
    relation = find_relation(con, MART)
    if relation is None:
        raise BudgetAlertError(f"{MART} is not in the warehouse; build it (kubeledger build)")
    day_filter = "where status_date <= $as_of" if as_of else ""
    cursor = con.execute(
        f"""
        with latest as (
            select *, row_number() over (
                partition by budget_name order by status_date desc
            ) as recency
            from {relation}
            {day_filter}
        )
        select budget_name, budget_kind, owner_value, budget_month, status_date, currency,
            monthly_budget, used_cost, forecast_cost, used_basis, used_pct_of_budget,
            forecast_pct_of_budget, thresholds_crossed, newly_crossed
        from latest
        where recency = 1 and thresholds_crossed_count > 0
        order by encode(budget_name)
        """,
        {"as_of": as_of} if as_of else {},
    )
    out = []
    for row in cursor.fetchall():
        values = [value if isinstance(value, float | None) else _text(value) for value in row]
        out.append(CrossedBudget(*values))
    return out


def alert_payload(crossed: list[CrossedBudget]) -> dict:
    """One JSON-ready message for the webhook: a line of text and every crossed budget."""
    lines = [
        f"{item.budget_name}: {item.thresholds_crossed} of {item.monthly_budget} "
        f"{item.currency} (used {item.used_cost}, forecast {item.forecast_cost}, "
        f"{item.budget_month[:7]} as of {item.status_date})"
        for item in crossed
    ]
    return {
        "source": "kubeledger",
        "event": "budget_threshold_crossed",
        "text": f"kubeledger: {len(crossed)} budget(s) over a threshold\n" + "\n".join(lines),
        "budgets": [asdict(item) for item in crossed],
    }


def post_alert(url: str, payload: dict, timeout: float = 10.0) -> int:
    """POST the message as JSON; returns the HTTP status, raises on a refusal."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", "User-Agent": "kubeledger"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status
    except OSError as exc:
        raise BudgetAlertError(f"budget webhook {url} refused the alert: {exc}") from exc
