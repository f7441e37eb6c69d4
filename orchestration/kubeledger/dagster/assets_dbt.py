"""The dbt project as daily-partitioned assets: staging, allocation and marts per day range.

One `dbt build` per run, over the run's partition range: `--vars {"start_date": first day,
"end_date": last day, "as_of": the run's date}` makes the incremental models replace exactly
those days (macros/incremental/) and data health measure repair windows from the run's date.
dbt data tests arrive as asset checks (unit tests are for `make test`, not for every run).
Before dbt runs, the run is checked against the 92-day limit and logged in `ops.rerun_log`
(see rerun_log.py), and every day whose billing lines changed since it was allocated is added
to the run (var `reallocate_days`, SPEC §9, kubeledger/reallocation.py); after it, the
fingerprints of the days allocated are stored, and the serving copy is published
(kubeledger/serving.py).

Every raw and config source maps to the landing asset, so the models sit downstream of it
(and of its blocking expectation checks).
"""

import json
import signal
import subprocess
from collections.abc import Iterator, Mapping
from typing import Any

from dagster import AssetExecutionContext, AssetKey, BackfillPolicy, DagsterEventType, Failure
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliResource,
    dbt_assets,
)

from kubeledger.dagster.assets_landing import LANDING_KEY
from kubeledger.dagster.dbt_project import DBT_MANIFEST, dbt_project
from kubeledger.dagster.partitions import daily_partitions
from kubeledger.dagster.rerun_log import record_finished, record_started
from kubeledger.dagster.resources import WAREHOUSE_POOL, WAREHOUSE_RETRY, WarehouseResource
from kubeledger.dagster.run_scope import scope_of
from kubeledger.dbt_vars import check_dbt_vars
from kubeledger.reallocation import check_changed_days, record_allocation
from kubeledger.serving import publish

# Sources written by the landing asset (the loader, the config tables, the ops tables).
LANDED_SCHEMAS = ("raw", "config", "ops")


class KubeledgerDbtTranslator(DagsterDbtTranslator):
    """Models keep their names as keys and are grouped by layer; landed sources are `landing`."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> AssetKey:
        if (
            dbt_resource_props["resource_type"] == "source"
            and dbt_resource_props.get("schema") in LANDED_SCHEMAS
        ):
            return AssetKey(LANDING_KEY)
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        if dbt_resource_props["resource_type"] == "seed":
            return "seeds"
        fqn = dbt_resource_props.get("fqn") or []
        return fqn[1] if len(fqn) > 2 else None


def stop_process(process: subprocess.Popen[bytes], grace_seconds: float = 30.0) -> None:
    """End a dbt process that is still running: SIGINT (dbt stops cleanly), SIGKILL after grace."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def landing_failed(context: AssetExecutionContext) -> bool:
    """Whether the landing step of this run failed (the ledger must not build on it)."""
    failures = context.instance.all_logs(context.run_id, of_type=DagsterEventType.STEP_FAILURE)
    return any(entry.step_key == LANDING_KEY for entry in failures)


TRANSLATOR = KubeledgerDbtTranslator(
    settings=DagsterDbtTranslatorSettings(
        enable_asset_checks=True, enable_duplicate_source_asset_keys=True
    )
)


@dbt_assets(
    manifest=DBT_MANIFEST,
    project=dbt_project,
    name="ledger_models",
    partitions_def=daily_partitions,
    backfill_policy=BackfillPolicy.single_run(),
    dagster_dbt_translator=TRANSLATOR,
    pool=WAREHOUSE_POOL,
    retry_policy=WAREHOUSE_RETRY,
)
def ledger_models(
    context: AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource
) -> Iterator[Any]:
    if landing_failed(context):
        # Dagster's in-process executor does not always skip this step when landing failed
        # (seen under load: it started, and a retryable error then slept for minutes)
        context.log.warning("landing failed in this run: the ledger is not built")
        return
    settings = warehouse.settings()
    scope = scope_of(context, warehouse.as_of_date(), int(settings["rerun_max_days_back"]))
    context.log.info(f"re-allocating {scope.describe()} in {warehouse.db()}")
    warehouse.prepare()
    with warehouse.connect() as con:
        record_started(con, scope)
    succeeded = False
    try:
        from kubeledger.warehouse import run_dbt

        changed = check_changed_days(
            warehouse.db(),
            lambda command: run_dbt(command, db_path=warehouse.db()),
            as_of=scope.as_of,
            max_days_back=int(settings["rerun_max_days_back"]),
        )
        if changed.days or changed.too_old:
            context.log.info(changed.describe())
        dbt_vars: dict[str, Any] = dict(scope.dbt_vars)
        if changed.days:
            dbt_vars["reallocate_days"] = changed.dbt_vars()
        args = ["build", "--exclude-resource-type", "unit_test"]
        args += ["--vars", json.dumps(check_dbt_vars(dbt_vars))]
        invocation = dbt.cli(args, context=context)
        try:
            yield from invocation.stream()
        except Exception as exc:
            if not warehouse.is_busy():
                # a failing model or test: retrying would only fail again
                raise Failure(description=str(exc), allow_retries=False) from exc
            context.log.warning(f"the warehouse is held by another process: {exc}")
            raise  # the retry policy tries again, with backoff
        finally:
            # a step left before dbt ended (closed, interrupted) must not leave dbt running
            # with the warehouse open and its output pipe full
            stop_process(invocation.process)
        # Only a run of every model allocates its days (a subset leaves the others as they were).
        if len(context.selected_asset_keys) == len(context.assets_def.keys):
            with warehouse.connect() as con:
                record_allocation(
                    con,
                    first_day=scope.first_day,
                    last_day=scope.last_day,
                    extra_days=changed.days,
                )
        # readers (BI tools, the report) see the new marts only now, all at once
        context.log.info(publish(warehouse.db()).line())
        succeeded = True
    finally:
        with warehouse.connect() as con:
            record_finished(con, scope.run_id, succeeded=succeeded)
