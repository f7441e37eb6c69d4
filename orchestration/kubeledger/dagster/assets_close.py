"""The monthly close as a monthly-partitioned asset downstream of the daily ledger (SPEC §9).

Each materialization asks the close package to close and seal its month as of the run's date;
the close package decides: before the grace window, with incomplete days or a blocked slice it
refuses (this asset then fails with the reason, so the run reports the month blocked and the
close schedule tries again the next day); from the deadline on it seals the blocked clusters on
their estimate, `partial`. A month sealed before is reported, never rewritten. A sealed month
(just sealed or sealed before) that fails `kubeledger verify` fails the asset, naming what
differs. A newly sealed month is published to the serving copy (kubeledger/serving.py).
"""

import datetime as dt
import json
from typing import Any

from dagster import (
    AssetExecutionContext,
    AssetKey,
    BackfillPolicy,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)

from kubeledger.contention import busy_message
from kubeledger.currency import format_amount
from kubeledger.dagster.assets_dbt import TRANSLATOR
from kubeledger.dagster.dbt_project import DBT_MANIFEST
from kubeledger.dagster.partitions import monthly_partitions
from kubeledger.dagster.resources import WAREHOUSE_POOL, WAREHOUSE_RETRY, WarehouseResource
from kubeledger.paths import dbt_target_path

CLOSE_KEY = "monthly_close"


def _close_model_keys() -> list[AssetKey]:
    """The models the close reads (dbt models tagged `close`), as upstream assets."""
    manifest = json.loads(DBT_MANIFEST.read_text())
    nodes = [
        node
        for node in manifest.get("nodes", {}).values()
        if node.get("resource_type") == "model" and "close" in (node.get("tags") or [])
    ]
    if not nodes:
        nodes = [
            node
            for node in manifest.get("nodes", {}).values()
            if node.get("name") == "fct_reconciliation_daily"
        ]
    return sorted({TRANSLATOR.get_asset_key(node) for node in nodes}, key=str)


def close_status(
    refusal_rows: list[dict[str, Any]], month_end: dt.date, as_of: dt.date, grace_days: int
) -> str:
    """A one-word reading of a refusal: waiting for the grace window, blocked, incomplete."""
    if as_of < month_end + dt.timedelta(days=grace_days):
        return "waiting_for_grace_window"
    if any(row.get("close_status") == "blocked" for row in refusal_rows):
        return "blocked"
    if any(row.get("days_missing") for row in refusal_rows):
        return "incomplete_days"
    return "refused"


def _months(context: AssetExecutionContext) -> list[str]:
    key_range = context.partition_key_range
    keys = monthly_partitions.get_partition_keys_in_range(key_range)
    return [key[:7] for key in keys]


def _is_sealed(warehouse: WarehouseResource, month: str) -> bool:
    import duckdb

    from kubeledger.close.seal import sealed_bill

    if not warehouse.db().exists():
        return False
    with duckdb.connect(str(warehouse.db())) as con:
        return sealed_bill(con, month) is not None


def _require_verified(warehouse: WarehouseResource, month: str, outcomes: dict[str, str]) -> None:
    """Fail (no retry: an edited seal does not heal) when the month's seal fails `verify`."""
    import duckdb

    from kubeledger.close.seal import VerificationError
    from kubeledger.close.verify import require_verified

    with duckdb.connect(str(warehouse.db())) as con:
        try:
            require_verified(con, month)
        except VerificationError as exc:
            raise Failure(
                description=f"close of {month}: the sealed month fails verification - {exc}",
                metadata={
                    "month": MetadataValue.text(month),
                    "status": MetadataValue.text("verification_failed"),
                    "differences": MetadataValue.text("\n".join(exc.problems)),
                    "closed_before": MetadataValue.text(json.dumps(outcomes)),
                },
                allow_retries=False,
            ) from exc


@asset(
    key=CLOSE_KEY,
    partitions_def=monthly_partitions,
    backfill_policy=BackfillPolicy.single_run(),
    pool=WAREHOUSE_POOL,
    retry_policy=WAREHOUSE_RETRY,
    deps=_close_model_keys(),
    group_name="close",
    kinds={"duckdb", "python"},
    description="The month's chargeback closed and sealed (sealed.*), as of the run's date: "
    "refused (and retried daily) while the month is blocked, sealed partial at the deadline.",
)
def monthly_close(
    context: AssetExecutionContext, warehouse: WarehouseResource
) -> MaterializeResult:
    from kubeledger.close import closer
    from kubeledger.close.seal import AlreadySealedError, SealError

    as_of = warehouse.as_of_date()
    grace_days = int(warehouse.settings()["grace_days"])
    warehouse.activate()
    # the close's own dbt artifacts, apart from the ledger's manifest
    project = closer.DbtProject(target_path=dbt_target_path() / "close")
    outcomes: dict[str, str] = {}
    sealed: dict[str, Any] = {}
    for month in _months(context):
        if _is_sealed(warehouse, month):
            # Sealed before: verify it, never rebuild or rewrite it.
            _require_verified(warehouse, month, outcomes)
            outcomes[month] = "already_sealed"
            context.log.info(f"{month} is sealed and verifies")
            continue
        context.log.info(f"closing {month} as of {as_of}")
        try:
            result = closer.close_month(
                warehouse.db(), month, as_of, project=project, progress=context.log.debug
            )
        except AlreadySealedError as exc:
            _require_verified(warehouse, month, outcomes)
            outcomes[month] = "already_sealed"
            context.log.info(str(exc))
            continue
        except closer.CloseError as exc:
            if busy_message(str(exc)) is not None:
                context.log.warning(str(exc))
                raise  # another process holds the warehouse: the retry policy tries again
            month_end = closer.month_bounds(month)[1]
            status = close_status(exc.rows, month_end, as_of, grace_days)
            raise Failure(
                description=f"close of {month} as of {as_of}: {status} - {exc}",
                metadata={
                    "month": MetadataValue.text(month),
                    "as_of": MetadataValue.text(as_of.isoformat()),
                    "status": MetadataValue.text(status),
                    "slices_behind": MetadataValue.int(len(exc.rows)),
                    "closed_before": MetadataValue.text(json.dumps(outcomes)),
                },
                allow_retries=False,
            ) from exc
        except SealError as exc:
            raise Failure(
                description=f"close of {month} as of {as_of} failed, nothing sealed: {exc}",
                metadata={
                    "month": MetadataValue.text(month),
                    "status": MetadataValue.text("seal_failed"),
                },
                allow_retries=False,
            ) from exc
        _require_verified(warehouse, month, outcomes)
        bill = result.bill
        outcomes[month] = f"sealed_{bill.bill_status}"
        sealed = {
            "bill_id": MetadataValue.text(bill.bill_id),
            "bill_status": MetadataValue.text(bill.bill_status),
            "billed_cost": MetadataValue.float(float(bill.billed_cost)),
            "line_count": MetadataValue.int(bill.line_count),
            "estimated_clusters": MetadataValue.text(", ".join(bill.estimated_clusters)),
        }
        context.log.info(
            f"sealed {month} as {bill.bill_id}: status {bill.bill_status}, "
            f"{bill.line_count} lines, {format_amount(bill.billed_cost, bill.currency)} billed"
        )
    if sealed:
        from kubeledger.serving import publish

        context.log.info(publish(warehouse.db()).line())
    return MaterializeResult(
        metadata={
            "as_of": MetadataValue.text(as_of.isoformat()),
            "outcome": MetadataValue.text(json.dumps(outcomes)),
            **sealed,
        }
    )
