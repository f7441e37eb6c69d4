"""Schedules: the daily ledger run, the daily close attempt, the daily retention.

- `ledger_daily_schedule` (02:15 UTC): one run over the last 3 day partitions (yesterday and
  the two days before), so yesterday is allocated and billing restated in the last 3 days is
  re-read into the ledger (SPEC §11); tag `reason=schedule`.
- `monthly_close_schedule` (06:00 UTC): from the end of a month's grace window on, one close
  attempt a day until the month is sealed (the close package falls back at the deadline).
- `raw_billing_retention_schedule` (04:00 UTC): prunes raw billing rows past retention.
"""

import datetime as dt
from collections.abc import Iterable

import duckdb
from dagster import (
    RunRequest,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from kubeledger.dagster.jobs import ledger_daily_job, monthly_close_job, raw_billing_retention
from kubeledger.dagster.resources import WarehouseResource
from kubeledger.dagster.run_scope import RANGE_END_TAG, RANGE_START_TAG, REASON_TAG

RESTATEMENT_DAYS = 3


def range_tags(first_day: dt.date, last_day: dt.date, reason: str) -> dict[str, str]:
    """Tags that make one run of a partition range (a single-run backfill) with a reason."""
    return {
        RANGE_START_TAG: first_day.isoformat(),
        RANGE_END_TAG: last_day.isoformat(),
        REASON_TAG: reason,
    }


def daily_run_request(today: dt.date, days: int = RESTATEMENT_DAYS) -> RunRequest:
    """Yesterday and the `days - 1` days before it, in one run."""
    last = today - dt.timedelta(days=1)
    first = last - dt.timedelta(days=days - 1)
    return RunRequest(
        run_key=f"schedule:{first}..{last}",
        tags=range_tags(first, last, "schedule"),
    )


@schedule(
    name="ledger_daily_schedule",
    job=ledger_daily_job,
    cron_schedule="15 2 * * *",
    execution_timezone="UTC",
    description="Every day: allocate yesterday and re-read the last 3 days' billing.",
)
def ledger_daily_schedule(context: ScheduleEvaluationContext) -> RunRequest:
    return daily_run_request(context.scheduled_execution_time.date())


def _month_end(first_of_next: dt.date) -> dt.date:
    return first_of_next - dt.timedelta(days=1)


def close_run_requests(
    today: dt.date, grace_days: int, sealed_months: Iterable[str], *, months_back: int = 1
) -> list[RunRequest]:
    """A close attempt for last month (`months_back` months) once past grace, until sealed."""
    sealed = set(sealed_months)
    requests = []
    first_of_next = today.replace(day=1)
    for _ in range(months_back):
        month_end = _month_end(first_of_next)
        month = month_end.strftime("%Y-%m")
        if today >= month_end + dt.timedelta(days=grace_days) and month not in sealed:
            requests.append(
                RunRequest(
                    run_key=f"close:{month}:{today}",
                    partition_key=f"{month}-01",
                    tags={"kubeledger/close_attempt": today.isoformat()},
                )
            )
        first_of_next = month_end.replace(day=1)
    return requests


def sealed_months(warehouse: WarehouseResource) -> set[str]:
    """Months already sealed; empty when the warehouse is busy or has no sealed store."""
    try:
        with warehouse.connect(read_only=True) as con:
            return {
                row[0]
                for row in con.execute("select bill_month from sealed.sealed_bills").fetchall()
            }
    except (duckdb.Error, OSError):
        return set()


@schedule(
    name="monthly_close_schedule",
    job=monthly_close_job,
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    description="Every day from a month's grace window on: try to close it until it is sealed.",
)
def monthly_close_schedule(context: ScheduleEvaluationContext, warehouse: WarehouseResource):
    today = context.scheduled_execution_time.date()
    grace = int(warehouse.settings()["grace_days"])
    requests = close_run_requests(today, grace, sealed_months(warehouse))
    return requests or SkipReason(f"no month to close as of {today}")


@schedule(
    name="raw_billing_retention_schedule",
    job=raw_billing_retention,
    cron_schedule="0 4 * * *",
    execution_timezone="UTC",
    description="Every day: prune raw billing rows past retention (sealed lines kept).",
)
def raw_billing_retention_schedule(context: ScheduleEvaluationContext) -> RunRequest:
    return RunRequest(run_key=f"retention:{context.scheduled_execution_time.date()}")
