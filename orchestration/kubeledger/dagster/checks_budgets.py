"""Budget thresholds as an asset check on `fct_budget_status_daily` (SPEC §10).

The check fails (severity WARN: a budget overrun is news, not bad data, so nothing downstream
is blocked) when any budget, an owner's or an allocation's, has a threshold crossed on its
latest day, and lists them in its metadata. When `budgets.webhook_url` is configured, the
same budgets are POSTed there as one JSON message (kubeledger.budgets.alerts).
"""

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetKey,
    MetadataValue,
    asset_check,
)

from kubeledger.budgets.alerts import alert_payload, crossed_budgets, post_alert
from kubeledger.dagster.resources import WarehouseResource

BUDGET_STATUS_KEY = AssetKey(["marts", "fct_budget_status_daily"])


@asset_check(
    asset=BUDGET_STATUS_KEY,
    name="budget_thresholds",
    description="Fails (WARN) when a budget's used or forecast cost crosses one of its "
    "thresholds; POSTs the alert to budgets.webhook_url when configured.",
)
def budget_thresholds(
    context: AssetCheckExecutionContext, warehouse: WarehouseResource
) -> AssetCheckResult:
    with warehouse.connect() as con:
        crossed = crossed_budgets(con, warehouse.as_of_date())
    metadata = {
        "crossed": MetadataValue.json([item.budget_name for item in crossed]),
        "thresholds": MetadataValue.md(
            "\n".join(f"- {item.budget_name}: {item.thresholds_crossed}" for item in crossed)
            or "none crossed"
        ),
    }
    url = warehouse.config().budgets_webhook_url
    if crossed and url:
        status = post_alert(url, alert_payload(crossed))
        context.log.info(f"budget alert posted to {url}: HTTP {status}")
        metadata["webhook_status"] = MetadataValue.int(status)
    return AssetCheckResult(
        passed=not crossed,
        severity=AssetCheckSeverity.WARN,
        metadata=metadata,
        description=(
            f"{len(crossed)} budget(s) over a threshold" if crossed else "every budget within"
        ),
    )
