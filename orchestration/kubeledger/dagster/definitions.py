"""The code location: `dagster dev -m kubeledger.dagster.definitions` (or `-w workspace.yaml`).

Assembles the assets (landing, the dbt models, the monthly close), the raw-data expectation
checks, the budget-threshold check, the jobs, schedules, the late-data sensor and the
resources; each lives in its own module of this package.
"""

from __future__ import annotations

from dagster import Definitions

from kubeledger.dagster.assets_close import monthly_close
from kubeledger.dagster.assets_dbt import ledger_models
from kubeledger.dagster.assets_landing import landing
from kubeledger.dagster.checks_budgets import budget_thresholds
from kubeledger.dagster.checks_expectations import landing_expectations
from kubeledger.dagster.jobs import ledger_daily_job, monthly_close_job, raw_billing_retention
from kubeledger.dagster.resources import WarehouseResource, dbt_resource
from kubeledger.dagster.schedules import (
    ledger_daily_schedule,
    monthly_close_schedule,
    raw_billing_retention_schedule,
)
from kubeledger.dagster.sensors import late_landing_files

defs = Definitions(
    assets=[landing, ledger_models, monthly_close],
    asset_checks=[landing_expectations, budget_thresholds],
    jobs=[ledger_daily_job, monthly_close_job, raw_billing_retention],
    schedules=[ledger_daily_schedule, monthly_close_schedule, raw_billing_retention_schedule],
    sensors=[late_landing_files],
    resources={"warehouse": WarehouseResource(), "dbt": dbt_resource()},
)
