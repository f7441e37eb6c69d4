"""What a run covers and why: its day range, the reason and who asked, and the 92-day limit.

A run's days are its partition range (one partition, or a single-run backfill's range). The
reason comes from the run's tags: `reason` set by the schedule (`schedule`) or the late-data
sensor (`late_data`); otherwise a run that belongs to a backfill is `backfill` and any other
run (launched from the UI or the CLI) is `manual`. Who asked: the UI user (`dagster/user`),
the schedule or sensor that asked, else the operating-system user.

A range reaching more than `reruns.max_days_back` (default 92) days before the as-of date is
refused before anything is written (SPEC §11, §13).
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass

from dagster import Failure, MetadataValue

from kubeledger.dagster.partitions import day_of

REASONS = ("schedule", "late_data", "manual", "backfill")
REASON_TAG = "reason"
USER_TAG = "dagster/user"
BACKFILL_TAG = "dagster/backfill"
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


@dataclass(frozen=True)
class RunScope:
    run_id: str
    job_name: str | None
    first_day: dt.date
    last_day: dt.date
    as_of: dt.date
    reason: str
    requested_by: str | None

    @property
    def day_count(self) -> int:
        return (self.last_day - self.first_day).days + 1

    @property
    def dbt_vars(self) -> dict[str, str]:
        return {
            "start_date": self.first_day.isoformat(),
            "end_date": self.last_day.isoformat(),
            "as_of": self.as_of.isoformat(),
        }

    def describe(self) -> str:
        days = (
            self.first_day.isoformat()
            if self.day_count == 1
            else f"{self.first_day}..{self.last_day} ({self.day_count} days)"
        )
        return f"{days}, reason {self.reason}, requested by {self.requested_by or 'unknown'}"


def reason_of(tags: Mapping[str, str]) -> str:
    reason = tags.get(REASON_TAG)
    if reason in REASONS:
        return reason
    if tags.get(BACKFILL_TAG):
        return "backfill"
    return "manual"


def requested_by_of(tags: Mapping[str, str]) -> str | None:
    if tags.get(USER_TAG):
        return tags[USER_TAG]
    if tags.get("dagster/schedule_name"):
        return f"schedule:{tags['dagster/schedule_name']}"
    if tags.get("dagster/sensor_name"):
        return f"sensor:{tags['dagster/sensor_name']}"
    try:
        return os.environ.get("USER") or getpass.getuser()
    except OSError:
        return None


def refusal(
    first_day: dt.date, last_day: dt.date, as_of: dt.date, max_days_back: int
) -> str | None:
    """Why a run over [first_day, last_day] may not run as of `as_of`, or None when it may."""
    oldest = as_of - dt.timedelta(days=max_days_back)
    if first_day >= oldest:
        return None
    return (
        f"Refused: this run re-allocates {first_day}..{last_day}, which reaches "
        f"{(as_of - first_day).days} days before {as_of}; kubeledger re-runs days at most "
        f"{max_days_back} days back (reruns.max_days_back), so the oldest day it may re-run is "
        f"{oldest}. Launch the backfill from {oldest} on; older days keep their ledger (a "
        "sealed month is corrected with `kubeledger correct`, never re-run)."
    )


def scope_of(context, as_of: dt.date, max_days_back: int) -> RunScope:
    """The run's scope from an asset or check context; raise Failure when it is refused."""
    key_range = context.partition_key_range
    first_day, last_day = day_of(key_range.start), day_of(key_range.end)
    tags = context.run.tags
    message = refusal(first_day, last_day, as_of, max_days_back)
    if message:
        raise Failure(
            description=message,
            metadata={
                "first_day": MetadataValue.text(first_day.isoformat()),
                "last_day": MetadataValue.text(last_day.isoformat()),
                "as_of": MetadataValue.text(as_of.isoformat()),
                "max_days_back": MetadataValue.int(max_days_back),
            },
            allow_retries=False,
        )
    return RunScope(
        run_id=context.run.run_id,
        job_name=context.run.job_name,
        first_day=first_day,
        last_day=last_day,
        as_of=as_of,
        reason=reason_of(tags),
        requested_by=requested_by_of(tags),
    )
