"""Schedules: the daily run covers the last 3 days; the close is tried daily after grace."""

from __future__ import annotations

import datetime as dt

from tests.test_dagster_support import RANGE_END_TAG, RANGE_START_TAG


def test_the_daily_run_allocates_yesterday_and_rereads_three_days_of_billing():
    from dagster import build_schedule_context

    from kubeledger.dagster.schedules import ledger_daily_schedule

    context = build_schedule_context(
        scheduled_execution_time=dt.datetime(2026, 11, 19, 2, 15, tzinfo=dt.UTC)
    )
    request = ledger_daily_schedule(context)
    assert (request.tags[RANGE_START_TAG], request.tags[RANGE_END_TAG]) == (
        "2026-11-16",
        "2026-11-18",
    )
    assert request.tags["reason"] == "schedule"
    assert request.partition_key_range.start == "2026-11-16"


def test_the_close_is_requested_daily_from_the_end_of_grace_until_sealed():
    from kubeledger.dagster.schedules import close_run_requests

    # October ends on the 31st; with 4 grace days it may close from November 4
    assert close_run_requests(dt.date(2026, 11, 3), 4, []) == []
    (request,) = close_run_requests(dt.date(2026, 11, 4), 4, [])
    assert request.partition_key == "2026-10-01"
    assert request.run_key == "close:2026-10:2026-11-04"
    (next_day,) = close_run_requests(dt.date(2026, 11, 5), 4, [])
    assert next_day.run_key == "close:2026-10:2026-11-05"
    assert close_run_requests(dt.date(2026, 11, 5), 4, ["2026-10"]) == []
    # past the deadline it is still tried (the close then seals on the fallback)
    (late,) = close_run_requests(dt.date(2026, 11, 30), 4, [])
    assert late.partition_key == "2026-10-01"
    # on December 1st the month to close is November, not yet past its grace window
    assert close_run_requests(dt.date(2026, 12, 1), 4, []) == []
