"""The FOCUS-shaped export of allocated cost per team (FOCUS 1.2 columns + `x_` extensions).

One row per cluster, UTC day, cost family, owner (team, cost center, application, status) and
allocation share: `fct_owner_costs_daily` unpivoted, so every share — direct, workload idle,
platform share, infrastructure idle share, … — is its own charge and a FinOps tool can group
by it (`x_AllocationShare`). Rows whose amount is exactly 0 are left out; over the month
EffectiveCost sums to fct_owner_costs_daily's total_cost.

How the FOCUS columns are filled, for a reader of the file:
- the provider is kubeledger itself (ProviderName, PublisherName, InvoiceIssuerName), the
  service is Kubernetes (ServiceCategory Compute, ServiceSubcategory Containers), and the
  cluster is the sub-account (SubAccountId); BillingAccountId is `--billing-account-id`
  (default `kubeledger`);
- ChargeCategory is Usage, ChargeFrequency Usage-Based, PricingCategory Other; the charge
  period is the UTC day, the billing period the UTC month (ends exclusive, as FOCUS says);
- BilledCost = EffectiveCost = ListCost = ContractedCost = the allocated amount: these are
  ledger allocations, not invoice lines (the sealed, cent-exact bill is fct_bill_lines_monthly);
- ResourceId is `<cluster>/<team>/<cost center>/<application>`; Tags hold the owner as
  user-defined tags and the share, family and status under the `kubeledger/` prefix;
- columns with no meaning for an allocation (commitment discounts, capacity reservations,
  SKUs, quantities, regions) are present and null.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from kubeledger.export.month import month_bounds

FOCUS_VERSION = "1.2"
FILE_STEM = "focus_allocated_costs"
DEFAULT_BILLING_ACCOUNT_ID = "kubeledger"
MONEY = "DECIMAL(38, 10)"

# (x_AllocationShare value, fct_owner_costs_daily column), in the order of the mart.
SHARES = (
    ("direct", "direct_cost"),
    ("workload_idle", "workload_idle_cost"),
    ("platform_share", "platform_share_cost"),
    ("infrastructure_idle_share", "infrastructure_idle_share_cost"),
    ("workload_idle_share", "workload_idle_share_cost"),
    ("unattributed_storage_share", "unattributed_storage_share_cost"),
    ("unattributed_network_share", "unattributed_network_share_cost"),
    ("unallocated", "unallocated_cost"),
)

# Every column of the file, in order, with its type and how it is filled.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("AvailabilityZone", "VARCHAR", "null"),
    ("BilledCost", MONEY, "amount"),
    ("BillingAccountId", "VARCHAR", ":billing_account_id"),
    ("BillingAccountName", "VARCHAR", "'kubeledger chargeback'"),
    ("BillingAccountType", "VARCHAR", "'Kubernetes chargeback ledger'"),
    ("BillingCurrency", "VARCHAR", "currency"),
    ("BillingPeriodEnd", "TIMESTAMP", ":period_end"),
    ("BillingPeriodStart", "TIMESTAMP", ":period_start"),
    ("CapacityReservationId", "VARCHAR", "null"),
    ("CapacityReservationStatus", "VARCHAR", "null"),
    ("ChargeCategory", "VARCHAR", "'Usage'"),
    ("ChargeClass", "VARCHAR", "null"),
    (
        "ChargeDescription",
        "VARCHAR",
        "replace(allocation_share, '_', ' ') || ' ' || cost_family || ' cost of ' || team || "
        "' / ' || application || ' on ' || cluster_id",
    ),
    ("ChargeFrequency", "VARCHAR", "'Usage-Based'"),
    ("ChargePeriodEnd", "TIMESTAMP", "cast(usage_date + interval 1 day as timestamp)"),
    ("ChargePeriodStart", "TIMESTAMP", "cast(usage_date as timestamp)"),
    ("CommitmentDiscountCategory", "VARCHAR", "null"),
    ("CommitmentDiscountId", "VARCHAR", "null"),
    ("CommitmentDiscountName", "VARCHAR", "null"),
    ("CommitmentDiscountQuantity", MONEY, "null"),
    ("CommitmentDiscountStatus", "VARCHAR", "null"),
    ("CommitmentDiscountType", "VARCHAR", "null"),
    ("CommitmentDiscountUnit", "VARCHAR", "null"),
    ("ConsumedQuantity", MONEY, "null"),
    ("ConsumedUnit", "VARCHAR", "null"),
    ("ContractedCost", MONEY, "amount"),
    ("ContractedUnitPrice", MONEY, "null"),
    ("EffectiveCost", MONEY, "amount"),
    ("InvoiceId", "VARCHAR", "null"),
    ("InvoiceIssuerName", "VARCHAR", "'kubeledger'"),
    ("ListCost", MONEY, "amount"),
    ("ListUnitPrice", MONEY, "null"),
    ("PricingCategory", "VARCHAR", "'Other'"),
    ("PricingCurrency", "VARCHAR", "currency"),
    ("PricingCurrencyContractedUnitPrice", MONEY, "null"),
    ("PricingCurrencyEffectiveCost", MONEY, "amount"),
    ("PricingCurrencyListUnitPrice", MONEY, "null"),
    ("PricingQuantity", MONEY, "null"),
    ("PricingUnit", "VARCHAR", "null"),
    ("ProviderName", "VARCHAR", "'kubeledger'"),
    ("PublisherName", "VARCHAR", "'kubeledger'"),
    ("RegionId", "VARCHAR", "null"),
    ("RegionName", "VARCHAR", "null"),
    (
        "ResourceId",
        "VARCHAR",
        "cluster_id || '/' || team || '/' || cost_center || '/' || application",
    ),
    ("ResourceName", "VARCHAR", "team || '/' || application"),
    ("ResourceType", "VARCHAR", "'Kubernetes owner'"),
    ("ServiceCategory", "VARCHAR", "'Compute'"),
    ("ServiceName", "VARCHAR", "'Kubernetes'"),
    ("ServiceSubcategory", "VARCHAR", "'Containers'"),
    ("SkuId", "VARCHAR", "null"),
    ("SkuMeter", "VARCHAR", "null"),
    ("SkuPriceDetails", "VARCHAR", "null"),
    ("SkuPriceId", "VARCHAR", "null"),
    ("SubAccountId", "VARCHAR", "cluster_id"),
    ("SubAccountName", "VARCHAR", "cluster_id"),
    ("SubAccountType", "VARCHAR", "'Kubernetes cluster'"),
    (
        "Tags",
        "VARCHAR",
        "cast(json_object('team', team, 'cost_center', cost_center, 'application', application, "
        "'kubeledger/owner_status', owner_status, 'kubeledger/cost_family', cost_family, "
        "'kubeledger/allocation_share', allocation_share) as varchar)",
    ),
    ("x_Team", "VARCHAR", "team"),
    ("x_CostCenter", "VARCHAR", "cost_center"),
    ("x_Application", "VARCHAR", "application"),
    ("x_OwnerStatus", "VARCHAR", "owner_status"),
    ("x_CostFamily", "VARCHAR", "cost_family"),
    ("x_AllocationShare", "VARCHAR", "allocation_share"),
)

FOCUS_COLUMNS = tuple(name for name, _, _ in COLUMNS if not name.startswith("x_"))
EXTENSION_COLUMNS = tuple(name for name, _, _ in COLUMNS if name.startswith("x_"))


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _currency(con: duckdb.DuckDBPyConnection) -> str:
    try:
        row = con.execute("select min(currency) from config.settings").fetchone()
    except duckdb.Error:
        return "USD"
    return str(row[0]) if row and row[0] else "USD"


def focus_query(
    con: duckdb.DuckDBPyConnection,
    first: dt.date,
    last: dt.date,
    billing_account_id: str = DEFAULT_BILLING_ACCOUNT_ID,
) -> str:
    """The SELECT of the FOCUS file for the UTC days first..last."""
    following = last + dt.timedelta(days=1)
    values = {
        ":billing_account_id": _literal(billing_account_id),
        ":period_start": f"timestamp {_literal(first.isoformat())}",
        ":period_end": f"timestamp {_literal(following.isoformat())}",
    }
    shares = "\n    union all\n    ".join(
        f"select cluster_id, usage_date, cost_family, team, cost_center, application, "
        f"owner_status, '{share}' as allocation_share, {column} as amount from owner_costs"
        for share, column in SHARES
    )
    select = ",\n    ".join(
        f'cast({values.get(expression, expression)} as {type_name}) as "{name}"'
        for name, type_name, expression in COLUMNS
    )
    return f"""
with owner_costs as (
    select
        cluster_id, usage_date, cost_family,
        coalesce(team, 'unallocated') as team,
        coalesce(cost_center, 'unallocated') as cost_center,
        coalesce(application, 'unallocated') as application,
        owner_status, direct_cost, workload_idle_cost, platform_share_cost,
        infrastructure_idle_share_cost, workload_idle_share_cost,
        unattributed_storage_share_cost, unattributed_network_share_cost, unallocated_cost
    from marts.fct_owner_costs_daily
    where usage_date between date {_literal(first.isoformat())}
        and date {_literal(last.isoformat())}
),
shares as (
    {shares}
),
charges as (
    select shares.*, {_literal(_currency(con))} as currency
    from shares
    where amount <> 0
)
select
    {select}
from charges
order by cluster_id, usage_date, cost_family, team, cost_center, application, owner_status,
    allocation_share
"""


def export_focus(
    con: duckdb.DuckDBPyConnection,
    month: str,
    out_dir: Path,
    file_format: str,
    *,
    billing_account_id: str,
    copy: Callable[..., int],
) -> dict[str, Any]:
    first, last = month_bounds(month)
    path = Path(out_dir) / f"{FILE_STEM}.{file_format}"
    sql = focus_query(con, first, last, billing_account_id)
    rows = copy(con, sql, path, file_format, timestamp_format="%Y-%m-%dT%H:%M:%SZ")
    total = con.execute(f'select coalesce(sum("EffectiveCost"), 0) from ({sql})').fetchone()
    return {
        "name": FILE_STEM,
        "file": path.name,
        "focus_version": FOCUS_VERSION,
        "source": "marts.fct_owner_costs_daily",
        "rows": rows,
        "total_effective_cost": str(total[0] if total else 0),
        "billing_account_id": billing_account_id,
        "columns": [{"name": name, "type": type_name} for name, type_name, _ in COLUMNS],
    }
