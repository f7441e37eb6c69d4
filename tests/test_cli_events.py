"""What a CLI build reports to the Dagster instance, on hand-made results (no dbt run): which
assets per day, which checks, and that the same days can be reported again (every daily
`kubeledger build` of every day does)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from tests.test_dagster_support import FLEET_START  # noqa: F401 (fixes the partitions' start)

DAYS = [dt.date(2026, 10, 1), dt.date(2026, 10, 2)]
CHECK = "column_rules_fct_pod_costs_daily"


def _results() -> list[SimpleNamespace]:
    from kubeledger.dagster.cli_events import _dbt_keys

    _, checks = _dbt_keys()
    (test_id,) = [uid for uid, (_, name) in checks.items() if name == CHECK]
    node = SimpleNamespace
    return [
        node(node=node(unique_id="model.kubeledger.fct_pod_costs_daily"), status="success"),
        node(node=node(unique_id="model.kubeledger.fct_node_costs_daily"), status="error"),
        node(node=node(unique_id=test_id), status="pass", message=None),
    ]


def _validation():
    from kubeledger.quality.validate import TableValidation

    return TableValidation(
        raw_table="koku_pod_usage", suite_name="s", rows_checked=3, expectations_evaluated=36
    )


def test_a_build_is_reported_per_day_and_can_be_reported_again(tmp_path, monkeypatch):
    from dagster import AssetCheckKey, AssetKey, DagsterInstance
    from dagster._core.storage.asset_check_execution_record import (
        AssetCheckExecutionRecordStatus,
    )

    from kubeledger.dagster.cli_events import build_events, report

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    events = build_events(DAYS, _results(), [_validation()], command="kubeledger build")
    # per day: landing and the model that succeeded (not the one that failed), the day's
    # landing check; once: the dbt test as its model's check
    assert report(events) == 2 * 2 + 2 + 1
    assert report(events) == 2 * 2 + 1  # again: the days' landing checks are kept, not doubled
    instance = DagsterInstance.from_config(str(tmp_path))
    days = {day.isoformat() for day in DAYS}
    assert instance.get_materialized_partitions(AssetKey("landing")) == days
    assert instance.get_materialized_partitions(AssetKey(["marts", "fct_pod_costs_daily"])) == days
    assert not instance.get_materialized_partitions(AssetKey(["marts", "fct_node_costs_daily"]))
    landing_check = AssetCheckKey(AssetKey("landing"), "expectations_koku_pod_usage")
    history = instance.event_log_storage.get_asset_check_execution_history(landing_check, 10)
    assert sorted(record.partition for record in history) == sorted(days)
    model_check = AssetCheckKey(AssetKey(["marts", "fct_pod_costs_daily"]), CHECK)
    history = instance.event_log_storage.get_asset_check_execution_history(model_check, 10)
    assert [record.status for record in history] == [AssetCheckExecutionRecordStatus.SUCCEEDED] * 2


def test_without_dagster_home_nothing_is_reported(monkeypatch):
    from kubeledger.dagster.cli_events import build_events, report

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert report(build_events(DAYS, _results(), [_validation()], command="x")) == 0
