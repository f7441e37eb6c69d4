"""What `kubeledger build` and `close` did, reported to the Dagster instance, so the Dagster UI
shows what was built however it was built (the CLI, `make demo`, or Dagster's own runs).

When `DAGSTER_HOME` is set (`make demo` and `make ui` use the project's `.dagster_home/`), a
CLI build reports, as runless events of that instance: one materialization of `landing` and of
every dbt model and seed that succeeded, per daily partition the build (re)allocated; each
landing expectation check per day, passed or not; and each dbt data test as its asset check.
A close reports the `monthly_close` partition of its month with the sealed bill's figures.
A day's landing check is reported once (the instance keeps one runless result per check and
partition); a failing gate stops the build before anything is reported, so it stays passed.
The asset and check keys are the code location's own (assets_dbt.TRANSLATOR, the expectation
checks), so the UI shows them on the same assets as its own runs.

Dagster's SQLite storage opens a connection and commits per event (tens of milliseconds each;
a demo build is ~5,700 events), so the events of one report are written over one connection
per shard and committed a few hundred at a time (`_one_transaction`); on any other storage
(Postgres) they go through the instance as they are.
"""

from __future__ import annotations

import datetime as dt
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckSeverity,
    AssetKey,
    AssetMaterialization,
    DagsterInstance,
    MetadataValue,
)

REPORTED_BY = "kubeledger/reported_by"
SUCCESS = ("success", "pass", "warn")
BATCH = 250


def instance_from_env() -> DagsterInstance | None:
    """The instance of `DAGSTER_HOME`, or None when it is not set (nothing is reported)."""
    home = os.environ.get("DAGSTER_HOME", "").strip()
    if not home:
        return None
    os.makedirs(home, exist_ok=True)
    return DagsterInstance.get()


@contextmanager
def _one_transaction(instance: DagsterInstance) -> Iterator[None]:
    """Write the events stored inside the block over one connection per SQLite shard, and
    commit them together at the end (none on an error)."""
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    storage = instance.event_log_storage
    if not isinstance(storage, SqliteEventLogStorage):
        yield
        return
    original = storage._connect
    open_shards: dict[str, Any] = {}

    @contextmanager
    def _connect(shard: str) -> Iterator[Any]:
        if shard not in open_shards:
            with original(shard):
                pass  # creates and migrates the shard's database once, as Dagster does
            engine = create_engine(
                storage.conn_string_for_shard(shard),
                poolclass=NullPool,
                connect_args={"timeout": 30},
            )
            connection = engine.connect()
            connection.begin()
            open_shards[shard] = (engine, connection)
        yield open_shards[shard][1]

    storage._connect = _connect  # type: ignore[method-assign]
    committed = False
    try:
        yield
        committed = True
    finally:
        del storage._connect
        for engine, connection in open_shards.values():
            if committed:
                connection.commit()
            else:
                connection.rollback()
            connection.close()
            engine.dispose()


@contextmanager
def _quiet_definitions() -> Iterator[None]:
    """Import the code location's modules without its beta / preview warnings on the console
    (a CLI user did not ask for Dagster's API notes)."""
    from dagster import BetaWarning, PreviewWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        warnings.simplefilter("ignore", PreviewWarning)
        yield


def _dbt_keys() -> tuple[dict[str, AssetKey], dict[str, tuple[AssetKey, str]]]:
    """dbt unique_id -> asset key (models, seeds), and -> (asset key, check name) (tests)."""
    with _quiet_definitions():
        from kubeledger.dagster.assets_dbt import ledger_models

    assets = {
        spec.metadata["dagster_dbt/unique_id"]: spec.key
        for spec in ledger_models.specs
        if "dagster_dbt/unique_id" in spec.metadata
    }
    checks = {
        spec.metadata["dagster_dbt/unique_id"]: (spec.asset_key, spec.name)
        for spec in ledger_models.check_specs
        if "dagster_dbt/unique_id" in (spec.metadata or {})
    }
    return assets, checks


def build_events(
    days: Sequence[dt.date],
    dbt_results: Iterable[Any],
    validations: Iterable[Any],
    *,
    command: str,
) -> list[AssetMaterialization | AssetCheckEvaluation]:
    """The events of one CLI build: its dbt node results (`RunExecutionResult.results` of
    every dbt command it ran) and its quality-gate validations, over its days."""
    with _quiet_definitions():
        from kubeledger.dagster.assets_landing import LANDING_KEY
        from kubeledger.dagster.checks_expectations import check_name

    asset_keys, check_keys = _dbt_keys()
    tag = {REPORTED_BY: MetadataValue.text(command)}
    built: list[AssetKey] = [AssetKey(LANDING_KEY)]
    checks: list[AssetCheckEvaluation] = []
    for result in dbt_results:
        unique_id = result.node.unique_id
        status = str(result.status)
        if unique_id in asset_keys and status in SUCCESS:
            built.append(asset_keys[unique_id])
        elif unique_id in check_keys:
            asset_key, name = check_keys[unique_id]
            checks.append(
                AssetCheckEvaluation(
                    asset_key=asset_key,
                    check_name=name,
                    passed=status in SUCCESS,
                    severity=AssetCheckSeverity.ERROR,
                    description=result.message or None,
                    metadata={**tag, "status": MetadataValue.text(status)},
                )
            )
    events: list[AssetMaterialization | AssetCheckEvaluation] = []
    for day in days:
        partition = day.isoformat()
        events += [
            AssetMaterialization(asset_key=key, partition=partition, metadata=tag)
            for key in dict.fromkeys(built)
        ]
        for validation in validations:
            events.append(
                AssetCheckEvaluation(
                    asset_key=AssetKey(LANDING_KEY),
                    check_name=check_name(validation.raw_table),
                    passed=validation.success,
                    severity=AssetCheckSeverity.ERROR,
                    description=validation.summary(),
                    partition=partition,
                    metadata={**tag, "rows_checked": MetadataValue.int(validation.rows_checked)},
                )
            )
    return events + checks


def close_event(month: str, sealed: dict[str, Any], *, command: str) -> AssetMaterialization:
    """The month's `monthly_close` partition, sealed, with the figures the asset reports
    (`sealed` is the month's sealed.sealed_bills row)."""
    with _quiet_definitions():
        from kubeledger.dagster.assets_close import CLOSE_KEY

    return AssetMaterialization(
        asset_key=AssetKey(CLOSE_KEY),
        partition=f"{month}-01",
        metadata={
            REPORTED_BY: MetadataValue.text(command),
            "outcome": MetadataValue.text(f"sealed_{sealed['bill_status']}"),
            "bill_id": MetadataValue.text(str(sealed["bill_id"])),
            "bill_status": MetadataValue.text(str(sealed["bill_status"])),
            "billed_cost": MetadataValue.float(float(sealed["billed_cost"])),
            "line_count": MetadataValue.int(int(sealed["line_count"])),
        },
    )


def _not_reported_before(
    instance: DagsterInstance, events: Sequence[AssetMaterialization | AssetCheckEvaluation]
) -> list[AssetMaterialization | AssetCheckEvaluation]:
    """Leave out a partitioned check result already reported runless for its partition: the
    instance keeps one runless result per check and partition (a second is refused). Only a
    passing gate is reported (a failing one stops the build first), so the one kept says the
    same: passed."""
    from dagster import AssetCheckKey

    keys = {
        AssetCheckKey(event.asset_key, event.check_name)
        for event in events
        if isinstance(event, AssetCheckEvaluation) and event.partition is not None
    }
    reported = {
        (key, record.partition)
        for key in keys
        for record in instance.event_log_storage.get_asset_check_execution_history(
            key, limit=100_000
        )
        if not record.run_id
    }
    return [
        event
        for event in events
        if not (
            isinstance(event, AssetCheckEvaluation)
            and event.partition is not None
            and (AssetCheckKey(event.asset_key, event.check_name), event.partition) in reported
        )
    ]


def report(events: Sequence[AssetMaterialization | AssetCheckEvaluation]) -> int:
    """Store `events` in the `DAGSTER_HOME` instance; return how many (0 without one)."""
    instance = instance_from_env()
    if instance is None or not events:
        return 0
    events = _not_reported_before(instance, events)
    # a few hundred events per transaction: a Dagster run writing the instance meanwhile waits
    # a second or two at most (SQLite has one writer), never the whole report
    for start in range(0, len(events), BATCH):
        with _one_transaction(instance):
            for event in events[start : start + BATCH]:
                instance.report_runless_asset_event(event)
    return len(events)
