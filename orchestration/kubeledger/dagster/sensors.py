"""The late-data sensor: new or changed usage and billing files re-run the days they cover.

The cursor remembers every landing file's fingerprint (modification time and size). A file
that is new or changed is read for its days (landing_files.py):
- days inside the repair window (`reruns.repair_window_days`, default 7, up to yesterday) are
  requested again, one run per run of consecutive days, tagged `reason=late_data`;
- older days are not re-run automatically: the sensor reports them (log and skip reason) as
  needing a manual backfill from the UI (allowed up to `reruns.max_days_back`, 92 days);
- today's days wait for the daily schedule (a day is complete once it has ended).
Supplementary CSVs (nodes, owners, load balancers, rate card) have no days and are only
remembered. The first evaluation, without a cursor, only records what is there.
"""

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field

from dagster import RunRequest, SensorEvaluationContext, SensorResult, SkipReason, sensor

from kubeledger.dagster.jobs import ledger_daily_job
from kubeledger.dagster.landing_files import describe, fingerprint, walk
from kubeledger.dagster.resources import WarehouseResource
from kubeledger.dagster.schedules import range_tags


@dataclass
class LateData:
    """What one evaluation found: day ranges to re-run, and files too old to re-run."""

    fingerprints: dict[str, str]
    ranges: list[tuple[dt.date, dt.date]] = field(default_factory=list)
    range_files: dict[tuple[dt.date, dt.date], list[str]] = field(default_factory=dict)
    manual: dict[str, list[dt.date]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)


def _consecutive(days: list[dt.date]) -> list[tuple[dt.date, dt.date]]:
    ranges: list[tuple[dt.date, dt.date]] = []
    for day in sorted(set(days)):
        if ranges and day == ranges[-1][1] + dt.timedelta(days=1):
            ranges[-1] = (ranges[-1][0], day)
        else:
            ranges.append((day, day))
    return ranges


def find_late_data(
    landing, previous: dict[str, str] | None, today: dt.date, window_days: int
) -> LateData:
    """Compare the landing folder with the fingerprints seen before (None: first look)."""
    current = {source_file: fingerprint(path) for source_file, path in walk(landing)}
    found = LateData(fingerprints=current)
    if previous is None:
        return found
    oldest = today - dt.timedelta(days=window_days)
    yesterday = today - dt.timedelta(days=1)
    wanted: dict[dt.date, list[str]] = {}
    for source_file, print_ in sorted(current.items()):
        if previous.get(source_file) == print_:
            continue
        found.changed.append(source_file)
        described = describe(landing, source_file)
        if described.kind == "unreadable":
            found.unreadable[source_file] = described.problem or "unreadable"
            continue
        if described.kind not in ("usage", "billing"):
            continue
        too_old = []
        for day in described.days():
            if oldest <= day <= yesterday:
                wanted.setdefault(day, []).append(source_file)
            elif day < oldest:
                too_old.append(day)
        if too_old:
            found.manual[source_file] = too_old
    found.ranges = _consecutive(list(wanted))
    for first, last in found.ranges:
        files = sorted({f for day, fs in wanted.items() if first <= day <= last for f in fs})
        found.range_files[(first, last)] = files
    return found


def _run_key(first: dt.date, last: dt.date, files: list[str], prints: dict[str, str]) -> str:
    digest = hashlib.sha256(json.dumps([[f, prints.get(f)] for f in files]).encode()).hexdigest()[
        :16
    ]
    return f"late_data:{first}..{last}:{digest}"


def _manual_note(manual: dict[str, list[dt.date]], oldest: dt.date) -> str:
    parts = []
    for source_file, days in sorted(manual.items()):
        first, last = min(days), max(days)
        span = first.isoformat() if first == last else f"{first}..{last}"
        parts.append(f"{source_file} ({span})")
    return (
        f"late files for days before the {oldest} repair window need a manual re-run "
        "(launch a backfill of those days from the UI, at most reruns.max_days_back days "
        "back): " + "; ".join(parts)
    )


@sensor(
    name="late_landing_files",
    job=ledger_daily_job,
    minimum_interval_seconds=60,
    description="Re-runs the days of new or changed usage and billing files of the last 7 "
    "days; reports older ones as needing a manual backfill.",
)
def late_landing_files(context: SensorEvaluationContext, warehouse: WarehouseResource):
    today = warehouse.as_of_date()
    window = int(warehouse.settings()["repair_window_days"])
    previous = json.loads(context.cursor) if context.cursor else None
    found = find_late_data(warehouse.landing(), previous, today, window)
    cursor = json.dumps(found.fingerprints, sort_keys=True)
    if previous is None:
        return SensorResult(
            skip_reason=SkipReason(
                f"first look at {warehouse.landing()}: {len(found.fingerprints)} files recorded"
            ),
            cursor=cursor,
        )
    for source_file, problem in found.unreadable.items():
        context.log.warning(f"{source_file}: cannot tell its days ({problem})")
    notes = []
    if found.manual:
        note = _manual_note(found.manual, today - dt.timedelta(days=window))
        context.log.warning(note)
        notes.append(note)
    requests = [
        RunRequest(
            run_key=_run_key(first, last, found.range_files[(first, last)], found.fingerprints),
            tags=range_tags(first, last, "late_data"),
        )
        for first, last in found.ranges
    ]
    if requests:
        return SensorResult(run_requests=requests, cursor=cursor)
    if not found.changed:
        notes.append("no new or changed landing files")
    elif not found.manual:
        notes.append(f"{len(found.changed)} changed files, none with days in the repair window")
    return SensorResult(skip_reason=SkipReason("; ".join(notes)), cursor=cursor)
