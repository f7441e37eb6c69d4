"""The landing asset: the landing folder loaded into the raw tables, per day partition.

Loading is idempotent and whole-folder (a file already loaded is skipped by its hash; a
restated export or a re-delivered usage report replaces what it restates), so materializing
any day range loads whatever arrived. Its blocking expectation checks
(checks_expectations.py) then validate the rows of the run's days before the ledger is built.

Config `billing_reread_days` (1 to 366) re-reads the billing export files covering that many
days up to the run's last day, e.g. to bring back rows pruned by retention for a backfill.
"""

import datetime as dt

from dagster import (
    AssetExecutionContext,
    BackfillPolicy,
    Config,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)
from pydantic import Field

from kubeledger.dagster.billing_reread import mark_billing_for_reread, validate_reread_days
from kubeledger.dagster.partitions import daily_partitions
from kubeledger.dagster.resources import WAREHOUSE_POOL, WAREHOUSE_RETRY, WarehouseResource
from kubeledger.dagster.run_scope import scope_of

LANDING_KEY = "landing"


class LandingConfig(Config):
    billing_reread_days: int | None = Field(
        default=None,
        description="Re-read the billing export files covering this many days (1 to 366) up "
        "to the run's last day, even if they were loaded before.",
    )


@asset(
    key=LANDING_KEY,
    partitions_def=daily_partitions,
    backfill_policy=BackfillPolicy.single_run(),
    pool=WAREHOUSE_POOL,
    retry_policy=WAREHOUSE_RETRY,
    group_name="landing",
    kinds={"duckdb", "python"},
    description="The landing folder (KUBELEDGER_LANDING) loaded into the raw tables: usage "
    "reports, cloud billing exports, supplementary CSVs. Idempotent; bad rows are quarantined.",
)
def landing(
    context: AssetExecutionContext, config: LandingConfig, warehouse: WarehouseResource
) -> MaterializeResult:
    from kubeledger.load import LoadError, load_landing

    problem = validate_reread_days(config.billing_reread_days)
    if problem:
        raise Failure(description=problem, allow_retries=False)
    settings = warehouse.settings()
    scope = scope_of(context, warehouse.as_of_date(), int(settings["rerun_max_days_back"]))
    landing_dir = warehouse.landing()
    if not landing_dir.is_dir():
        raise Failure(
            description=f"landing folder {landing_dir} does not exist; set KUBELEDGER_LANDING "
            "(or the warehouse resource's landing_dir) to the folder the exports land in",
            allow_retries=False,
        )
    context.log.info(f"landing {landing_dir} into {warehouse.db()} for {scope.describe()}")
    warehouse.prepare()
    reread: list[str] = []
    with warehouse.connect() as con:
        if config.billing_reread_days:
            first = scope.last_day - dt.timedelta(days=config.billing_reread_days - 1)
            reread = mark_billing_for_reread(con, landing_dir, first, scope.last_day)
            context.log.info(
                f"billing re-read {first}..{scope.last_day}: {len(reread)} export files "
                "will be read again"
            )
        try:
            summary = load_landing(con, landing_dir, progress=context.log.debug)
        except LoadError as exc:
            raise Failure(description=str(exc), allow_retries=False) from exc
    context.log.info(summary.total_line())
    return MaterializeResult(
        metadata={
            "days": MetadataValue.text(scope.describe()),
            "files_loaded": MetadataValue.int(summary.files_loaded),
            "files_skipped": MetadataValue.int(summary.files_skipped),
            "files_replacing_earlier_data": MetadataValue.int(summary.files_replaced),
            "rows_loaded": MetadataValue.int(summary.rows_loaded),
            "rows_quarantined": MetadataValue.int(summary.rows_quarantined),
            "optional_values_nulled": MetadataValue.int(summary.values_nulled),
            "billing_files_reread": MetadataValue.int(len(reread)),
            "summary": MetadataValue.text(summary.total_line()),
        }
    )
