"""Jobs: the daily ledger (landing + checks + dbt), the monthly close, raw billing retention."""

from __future__ import annotations

from dagster import AssetSelection, define_asset_job

from kubeledger.dagster.assets_close import monthly_close
from kubeledger.dagster.assets_dbt import ledger_models
from kubeledger.dagster.assets_landing import landing
from kubeledger.dagster.retention import raw_billing_retention

ledger_daily_job = define_asset_job(
    name="ledger_daily",
    selection=AssetSelection.assets(landing, ledger_models),
    description="Load the landing folder, check it, and re-allocate the run's days.",
)

monthly_close_job = define_asset_job(
    name="monthly_close_job",
    selection=AssetSelection.assets(monthly_close),
    description="Close and seal a month as of today (refused while blocked).",
)

__all__ = ["ledger_daily_job", "monthly_close_job", "raw_billing_retention"]
