"""Backfills: refused past 92 days back before anything is written; billing re-read 1..366."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.test_dagster_support import (
    query,
    range_tags,
    step_failures,
    tiny_fleet,
)
from tests.test_dagster_support import warehouse as warehouse_resource

AS_OF = "2026-11-20"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return tiny_fleet(tmp_path_factory.mktemp("backfill_fleet"))


def _run(fleet, tags: dict[str, str], run_config: dict | None = None):
    from kubeledger.dagster.definitions import defs

    job = defs.resolve_job_def("ledger_daily")
    return job.execute_in_process(
        tags=tags,
        run_config=run_config,
        resources={"warehouse": warehouse_resource(fleet, AS_OF)},
        raise_on_error=False,
    )


def test_the_limit_is_92_days_before_the_as_of_date():
    from kubeledger.dagster.run_scope import refusal

    as_of = dt.date(2026, 11, 20)
    assert refusal(dt.date(2026, 8, 20), dt.date(2026, 8, 21), as_of, 92) is None  # 92 back
    message = refusal(dt.date(2026, 8, 19), dt.date(2026, 8, 21), as_of, 92)  # 93 back
    assert message.startswith(
        "Refused: this run re-allocates 2026-08-19..2026-08-21, which "
        "reaches 93 days before 2026-11-20"
    )


def test_a_backfill_100_days_back_is_refused_with_the_reason_and_writes_nothing(fleet):
    first = (dt.date(2026, 11, 20) - dt.timedelta(days=100)).isoformat()  # 2026-08-12
    result = _run(fleet, range_tags(first, "2026-08-14", **{"dagster/backfill": "abc"}))

    assert not result.success
    failures = step_failures(result)
    assert list(failures) == ["landing"]
    assert (
        "Refused: this run re-allocates 2026-08-12..2026-08-14, which reaches 100 days before "
        "2026-11-20; kubeledger re-runs days at most 92 days back (reruns.max_days_back), so "
        "the oldest day it may re-run is 2026-08-20." in failures["landing"]
    )
    # nothing was loaded, nothing logged: the warehouse file was never even created
    assert not (fleet / "kubeledger.duckdb").exists()


@pytest.mark.parametrize("days", [0, 367])
def test_billing_reread_days_outside_1_to_366_is_refused(fleet, days):
    result = _run(
        fleet,
        range_tags("2026-10-01", "2026-10-01"),
        {"ops": {"landing": {"config": {"billing_reread_days": days}}}},
    )
    assert not result.success
    assert f"billing_reread_days: {days} is outside 1..366" in step_failures(result)["landing"]


def test_a_billing_reread_loads_the_exports_covering_those_days_again(fleet, tmp_path):
    from kubeledger.dagster.billing_reread import mark_billing_for_reread
    from kubeledger.load import load_landing

    db = tmp_path / "reread.duckdb"
    load_landing(db, fleet / "landing")
    import duckdb

    with duckdb.connect(str(db)) as con:
        before = con.execute("select count(*) from raw.aws_cur2").fetchone()[0]
        # the exports cover 2026-10-01 .. 2026-10-02 (the last two days are not billed yet)
        assert (
            mark_billing_for_reread(
                con, fleet / "landing", dt.date(2026, 10, 3), dt.date(2026, 10, 4)
            )
            == []
        )
        marked = mark_billing_for_reread(
            con, fleet / "landing", dt.date(2026, 10, 2), dt.date(2026, 10, 4)
        )
    assert sorted(path.split("/")[1] for path in marked) == ["aws", "gcp"]
    summary = load_landing(db, fleet / "landing")
    assert sorted(f.source_file for f in summary.files if f.status == "loaded") == sorted(marked)
    # the re-read replaced the same rows: nothing doubled
    assert query(db, "select count(*) from raw.aws_cur2") == [(before,)]


def test_the_ledger_step_knows_when_landing_failed_in_its_run(fleet):
    """The ledger step builds nothing after a failed landing step of its run (Dagster's
    in-process executor once started it anyway, under load, and it then slept for minutes on
    a retry)."""
    from types import SimpleNamespace

    from dagster import DagsterInstance

    from kubeledger.dagster.assets_dbt import landing_failed
    from kubeledger.dagster.definitions import defs

    instance = DagsterInstance.ephemeral()
    result = defs.resolve_job_def("ledger_daily").execute_in_process(
        tags=range_tags("2026-08-12", "2026-08-14", **{"dagster/backfill": "abc"}),
        resources={"warehouse": warehouse_resource(fleet, AS_OF)},
        instance=instance,
        raise_on_error=False,
    )
    assert list(step_failures(result)) == ["landing"]
    assert landing_failed(SimpleNamespace(instance=instance, run_id=result.run_id))
    assert not landing_failed(SimpleNamespace(instance=instance, run_id="no-such-run"))
