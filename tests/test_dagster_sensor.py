"""The late-data sensor: a late file re-runs its day inside the 7-day window, and only it."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.test_dagster_support import RANGE_END_TAG, RANGE_START_TAG, tiny_fleet, usage_report
from tests.test_dagster_support import warehouse as warehouse_resource

AS_OF = "2026-10-08"  # the fleet has 2026-10-01 .. 2026-10-04


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return tiny_fleet(tmp_path_factory.mktemp("sensor_fleet"))


def _late_copy(fleet, day: dt.date, as_day: dt.date, name: str) -> str:
    """A pod report of `day`, rewritten to `as_day`, dropped into `as_day`'s folder."""
    source = usage_report(fleet / "landing", "eks-prod", day)
    folder = fleet / "landing" / "usage" / "eks-prod" / as_day.isoformat()
    folder.mkdir(parents=True, exist_ok=True)
    text = source.read_text().replace(day.isoformat(), as_day.isoformat())
    (folder / name).write_text(text)
    return (folder / name).relative_to(fleet / "landing").as_posix()


def _evaluate(fleet, cursor: str | None):
    from dagster import build_sensor_context

    from kubeledger.dagster.sensors import late_landing_files

    context = build_sensor_context(
        cursor=cursor, resources={"warehouse": warehouse_resource(fleet, AS_OF)}
    )
    return late_landing_files(context)


def test_a_late_file_five_days_back_requests_that_day_and_no_other(fleet):
    first = _evaluate(fleet, None)
    assert first.run_requests == []  # the first look only records the folder
    cursor = first.cursor
    data_files = [
        # manifests (the operator's manifest.json, AWS's <export>-Manifest.json) are no data
        p
        for p in (fleet / "landing").rglob("*")
        if p.is_file() and not p.name.lower().endswith("manifest.json")
    ]
    assert len(json.loads(cursor)) == len(data_files)

    late = _late_copy(fleet, dt.date(2026, 10, 3), dt.date(2026, 10, 3), "late_report.0.csv")
    result = _evaluate(fleet, cursor)

    assert [
        (r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG], r.tags["reason"])
        for r in result.run_requests
    ] == [("2026-10-03", "2026-10-03", "late_data")]
    assert late in json.loads(result.cursor)

    # seen once, never again
    again = _evaluate(fleet, result.cursor)
    assert again.run_requests == []
    assert "no new or changed landing files" in again.skip_reason.skip_message


def test_days_older_than_the_repair_window_are_reported_not_requested(fleet):
    from kubeledger.dagster.sensors import find_late_data

    cursor = _evaluate(fleet, None).cursor
    old = _late_copy(fleet, dt.date(2026, 10, 1), dt.date(2026, 9, 20), "old_report.0.csv")
    today = _late_copy(fleet, dt.date(2026, 10, 1), dt.date(2026, 10, 8), "today.0.csv")

    result = _evaluate(fleet, cursor)
    assert result.run_requests == []
    message = result.skip_reason.skip_message
    assert "need a manual re-run" in message
    assert f"{old} (2026-09-20)" in message
    assert today not in message  # today's day waits for the daily schedule

    found = find_late_data(fleet / "landing", json.loads(cursor), dt.date(2026, 10, 8), 7)
    assert found.manual == {old: [dt.date(2026, 9, 20)]}
    assert found.ranges == []
