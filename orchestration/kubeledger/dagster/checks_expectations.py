"""The raw-data expectations as blocking asset checks on the landing asset (SPEC §13).

One check per raw table runs that table's Great Expectations suite (kubeledger.quality) on the
rows of the run's days. A failing check has ERROR severity and is blocking, so the ledger
models downstream do not run on bad input; the failing rows are written to
`ops.expectation_results`, where `fct_data_health_daily` shows them per cluster and day.
"""

import warnings
from collections.abc import Iterator

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    MetadataValue,
    PreviewWarning,
    multi_asset_check,
)

from kubeledger.dagster.assets_landing import LANDING_KEY
from kubeledger.dagster.expectation_log import record_validations
from kubeledger.dagster.partitions import daily_partitions
from kubeledger.dagster.resources import WAREHOUSE_POOL, WarehouseResource
from kubeledger.dagster.run_scope import scope_of
from kubeledger.quality import SUITES, TableSuite


def check_name(raw_table: str) -> str:
    return f"expectations_{raw_table}"


def _check_spec(suite: TableSuite) -> AssetCheckSpec:
    # Partitioned checks are a preview feature of Dagster 1.13; they give one result per day.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PreviewWarning)
        return AssetCheckSpec(
            name=check_name(suite.table.name),
            asset=LANDING_KEY,
            blocking=True,
            partitions_def=daily_partitions,
            description=f"Great Expectations suite {suite.name} on raw.{suite.table.name}: "
            + "; ".join(spec.description for spec in suite.expectations),
        )


EXPECTATION_CHECKS = [_check_spec(suite) for suite in SUITES]


@multi_asset_check(
    specs=EXPECTATION_CHECKS,
    can_subset=True,
    pool=WAREHOUSE_POOL,
    name="landing_expectations",
    description="Great Expectations suites on every raw table, for the run's days.",
)
def landing_expectations(
    context: AssetCheckExecutionContext, warehouse: WarehouseResource
) -> Iterator[AssetCheckResult]:
    from kubeledger.quality import validate_raw_tables

    settings = warehouse.settings()
    scope = scope_of(context, warehouse.as_of_date(), int(settings["rerun_max_days_back"]))
    selected = {key.name for key in context.selected_asset_check_keys}
    tables = [s.table.name for s in SUITES if check_name(s.table.name) in selected]
    with warehouse.connect() as con:
        validations = validate_raw_tables(con, scope.first_day, scope.last_day, tables=tables)
        record_validations(
            con, validations, scope.first_day, scope.last_day, run_id=context.run.run_id
        )
    validated = {validation.raw_table: validation for validation in validations}
    for table in tables:
        validation = validated.get(table)
        if validation is None:
            yield AssetCheckResult(
                check_name=check_name(table),
                asset_key=LANDING_KEY,
                passed=True,
                metadata={
                    "rows_checked": MetadataValue.int(0),
                    "note": MetadataValue.text(f"raw.{table} does not exist yet"),
                },
            )
            continue
        if not validation.success:
            context.log.error(validation.summary())
        yield AssetCheckResult(
            check_name=check_name(table),
            asset_key=LANDING_KEY,
            passed=validation.success,
            severity=AssetCheckSeverity.ERROR,
            description=validation.summary(),
            metadata={
                "days": MetadataValue.text(f"{scope.first_day}..{scope.last_day}"),
                "rows_checked": MetadataValue.int(validation.rows_checked),
                "expectations_evaluated": MetadataValue.int(validation.expectations_evaluated),
                "expectations_failed": MetadataValue.int(len(validation.failures)),
                "rows_failed": MetadataValue.int(
                    sum(failure.unexpected_count for failure in validation.failures)
                ),
            },
        )
