"""Partitions: one per UTC day for landing and the ledger, one per UTC month for the close.

The first day is `KUBELEDGER_PARTITIONS_START` (YYYY-MM-DD) when set (e.g. the data's first
day); otherwise the first of the month that holds the oldest day a re-run may reach (the
default `reruns.max_days_back`, 92 days, before today). Older partitions are refused when run
(see run_scope.py); the billing re-read (1 to 366 days) is a landing option, not a partition.
The last daily partition is yesterday (a day is complete once it has ended, in UTC); the last
monthly one is last month.
"""

from __future__ import annotations

import datetime as dt
import os

from dagster import DailyPartitionsDefinition, MonthlyPartitionsDefinition

from kubeledger.config import DEFAULT_SETTINGS

START_ENV = "KUBELEDGER_PARTITIONS_START"


def partitions_start(today: dt.date | None = None) -> dt.date:
    """The first day partition: the env override, else the month of the re-run horizon."""
    text = os.environ.get(START_ENV, "").strip()
    if text:
        try:
            return dt.date.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(f"{START_ENV}: {text!r} is not a date (YYYY-MM-DD)") from exc
    today = today or dt.datetime.now(dt.UTC).date()
    horizon = today - dt.timedelta(days=int(DEFAULT_SETTINGS["rerun_max_days_back"]) + 1)
    return horizon.replace(day=1)


PARTITIONS_START = partitions_start()

daily_partitions = DailyPartitionsDefinition(
    start_date=PARTITIONS_START.isoformat(), timezone="UTC"
)
monthly_partitions = MonthlyPartitionsDefinition(
    start_date=PARTITIONS_START.replace(day=1).isoformat(), timezone="UTC"
)


def day_of(partition_key: str) -> dt.date:
    """The date of a daily partition key, or the first day of a monthly one."""
    return dt.date.fromisoformat(partition_key[:10])


def month_of(partition_key: str) -> str:
    """`2026-10-01` (a monthly partition key) -> `2026-10`."""
    return partition_key[:7]
