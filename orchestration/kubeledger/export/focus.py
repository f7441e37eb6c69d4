"""The FOCUS 1.2 export of the month's bill: one row per bill line, its sealed amount.

Rows are the lines of the month's bill (SPEC §9): the sealed bill when the month is sealed
(and only if it verifies), else the draft of the last build (`x_BillState` says which). Each
sealed line is one Usage row whose BilledCost, EffectiveCost, ListCost and ContractedCost are
the sealed amount, so the rows sum to the sealed bill exactly, in the currency's minor unit
(SPEC §1.2); each correction line sealed since is one more row with ChargeClass `Correction`
and its delta (FOCUS: a correction to a previously invoiced billing period), so all rows sum
to the corrected bill. The ledger estimate a line was split by is `x_EstimatedCost`.

How the FOCUS columns are filled, for a reader of the file:
- the provider is kubeledger itself (ProviderName, PublisherName, InvoiceIssuerName) and the
  sealed bill is its invoice: InvoiceId is the bill ID (a correction row: the correction ID;
  a draft row: null, no invoice is issued yet); BillingAccountId is `--billing-account-id`
  (default `kubeledger`); the cluster is the sub-account (SubAccountId);
- the charge and billing periods are the UTC month, ends exclusive, as FOCUS says; in Parquet
  they are timestamps adjusted to UTC (`TIMESTAMP WITH TIME ZONE`), in CSV ISO 8601 with `Z`;
- ChargeCategory is Usage, ChargeFrequency Usage-Based, PricingCategory Other (kubeledger
  prices a line as its share of the slice's invoice or rate card, no price list applies);
- PricingQuantity is the line's allocation weight, its ledger estimate after the unassigned
  policy, in PricingUnit `Estimate Units` (one unit of the billing currency of estimated
  cost): BilledCost / PricingQuantity is the slice's factor, up to the minor-unit rounding.
  Correction rows leave both null, as FOCUS allows;
- ServiceName is `Kubernetes <family>`, with one ServiceCategory and ServiceSubcategory per
  family (compute: Compute / Containers; storage: Storage / Other (Storage); network:
  Networking / Other (Networking); any other: Other / Other (Other));
- ResourceId is `<cluster>/<line key>` (the owner in the cluster: a cost center or a team,
  per `bill_line_grain`), null with ResourceType for the `__unassigned__` line, which is no
  owner's; Tags hold the line ID, family and slice basis under the `kubeledger/` prefix.
A FOCUS column that kubeledger has nothing for (commitment discounts, capacity reservations,
SKUs, list and contracted unit prices, consumed quantities, regions) is left out, not written
empty; ChargeClass (mandatory) is null on every row that is not a correction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from kubeledger.close.relations import find_relation
from kubeledger.export.month import ExportError, month_bounds

FOCUS_VERSION = "1.2"
FILE_STEM = "focus_allocated_costs"
DEFAULT_BILLING_ACCOUNT_ID = "kubeledger"
MONEY = "DECIMAL(38, 3)"  # bill money: every amount a whole number of its minor unit
QUANTITY = "DECIMAL(38, 6)"  # the ledger's estimates
PERIOD = "TIMESTAMPTZ"  # a moment in UTC; CSV writes it as ISO 8601 text with `Z`
PRICING_UNIT = "Estimate Units"

SERVICES = {
    "compute": ("Compute", "Containers"),
    "storage": ("Storage", "Other (Storage)"),
    "network": ("Networking", "Other (Networking)"),
}


def _service_case(index: int, fallback: str) -> str:
    whens = " ".join(f"when '{family}' then '{names[index]}'" for family, names in SERVICES.items())
    return f"case cost_family {whens} else '{fallback}' end"


# Every column of the file, in order (FOCUS columns alphabetically, then the `x_` ones), with
# its type and the expression over `charges` that fills it.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("BilledCost", MONEY, "amount"),
    ("BillingAccountId", "VARCHAR", ":billing_account_id"),
    ("BillingAccountName", "VARCHAR", "'kubeledger chargeback'"),
    ("BillingAccountType", "VARCHAR", "'Kubernetes chargeback ledger'"),
    ("BillingCurrency", "VARCHAR", "currency"),
    ("BillingPeriodEnd", PERIOD, ":period_end"),
    ("BillingPeriodStart", PERIOD, ":period_start"),
    ("ChargeCategory", "VARCHAR", "'Usage'"),
    ("ChargeClass", "VARCHAR", "case when is_correction then 'Correction' end"),
    (
        "ChargeDescription",
        "VARCHAR",
        "case when is_correction then 'correction of ' else '' end || cost_family "
        "|| ' cost of ' || case when is_unassigned then 'no owner (__unassigned__)' "
        "else line_key end || ' on ' || cluster_id || ', ' || bill_month",
    ),
    ("ChargeFrequency", "VARCHAR", "'Usage-Based'"),
    ("ChargePeriodEnd", PERIOD, ":period_end"),
    ("ChargePeriodStart", PERIOD, ":period_start"),
    ("ContractedCost", MONEY, "amount"),
    ("EffectiveCost", MONEY, "amount"),
    ("InvoiceId", "VARCHAR", "invoice_id"),
    ("InvoiceIssuerName", "VARCHAR", "'kubeledger'"),
    ("ListCost", MONEY, "amount"),
    ("PricingCategory", "VARCHAR", "'Other'"),
    ("PricingQuantity", QUANTITY, "case when not is_correction then allocation_estimate end"),
    ("PricingUnit", "VARCHAR", f"case when not is_correction then '{PRICING_UNIT}' end"),
    ("ProviderName", "VARCHAR", "'kubeledger'"),
    ("PublisherName", "VARCHAR", "'kubeledger'"),
    ("ResourceId", "VARCHAR", "case when not is_unassigned then cluster_id || '/' || line_key end"),
    ("ResourceName", "VARCHAR", "case when not is_unassigned then line_key end"),
    ("ResourceType", "VARCHAR", "case when not is_unassigned then 'Kubernetes owner' end"),
    ("ServiceCategory", "VARCHAR", _service_case(0, "Other")),
    ("ServiceName", "VARCHAR", "'Kubernetes ' || cost_family"),
    ("ServiceSubcategory", "VARCHAR", _service_case(1, "Other (Other)")),
    ("SubAccountId", "VARCHAR", "cluster_id"),
    ("SubAccountName", "VARCHAR", "cluster_id"),
    ("SubAccountType", "VARCHAR", "'Kubernetes cluster'"),
    (
        "Tags",
        "VARCHAR",
        "cast(json_object('kubeledger/bill_line_id', line_id, 'kubeledger/cost_family', "
        "cost_family, 'kubeledger/basis', basis) as varchar)",
    ),
    ("x_BillState", "VARCHAR", "bill_state"),
    ("x_BillLineId", "VARCHAR", "line_id"),
    ("x_CostFamily", "VARCHAR", "cost_family"),
    ("x_LineKey", "VARCHAR", "line_key"),
    ("x_Basis", "VARCHAR", "basis"),
    ("x_EstimatedCost", QUANTITY, "estimated_cost"),
)

FOCUS_COLUMNS = tuple(name for name, _, _ in COLUMNS if not name.startswith("x_"))
EXTENSION_COLUMNS = tuple(name for name, _, _ in COLUMNS if name.startswith("x_"))

# The charges CTE every column reads, with no rows (a month without a bill yet).
EMPTY_CHARGES = """
    select
        cast(null as varchar) as bill_month, cast(null as varchar) as bill_state,
        cast(null as varchar) as invoice_id, cast(null as boolean) as is_correction,
        cast(null as varchar) as cluster_id, cast(null as varchar) as cost_family,
        cast(null as varchar) as line_key, cast(null as varchar) as line_id,
        cast(null as boolean) as is_unassigned, cast(null as decimal(38, 6)) as estimated_cost,
        cast(null as decimal(38, 6)) as allocation_estimate,
        cast(null as decimal(38, 3)) as amount, cast(null as varchar) as currency,
        cast(null as varchar) as basis
    where false
"""


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sealed_bill_id(con: duckdb.DuckDBPyConnection, month: str) -> str | None:
    from kubeledger.close.seal import sealed_bill

    row = sealed_bill(con, month)
    return None if row is None else str(row["bill_id"])


def _sealed_charges(bill_id: str, month: str) -> str:
    """The sealed lines, then every correction line of the bill (one row per correction)."""
    bill = _literal(bill_id)
    return f"""
    select
        lines.bill_month, 'sealed' as bill_state, lines.bill_id as invoice_id,
        false as is_correction, lines.cluster_id, lines.cost_family, lines.line_key,
        lines.line_id, lines.is_unassigned, lines.estimated_cost, lines.allocation_estimate,
        lines.billed_cost as amount, coalesce(slices.currency, bills.currency) as currency,
        slices.basis
    from sealed.sealed_bill_lines as lines
    inner join sealed.sealed_bills as bills on lines.bill_id = bills.bill_id
    left join sealed.sealed_bill_clusters as slices
        on lines.bill_id = slices.bill_id
        and lines.cluster_id = slices.cluster_id
        and lines.cost_family = slices.cost_family
    where lines.bill_id = {bill}
    union all
    select
        corrections.bill_month, 'sealed', corrections.correction_id, true,
        corrections.cluster_id, corrections.cost_family, corrections.line_key,
        corrections.line_id, corrections.line_key = '__unassigned__',
        corrections.recomputed_estimated_cost, cast(null as decimal(38, 6)),
        corrections.delta_cost, coalesce(slices.currency, bills.currency), slices.basis
    from sealed.correction_bill_lines as corrections
    inner join sealed.sealed_bills as bills on corrections.bill_id = bills.bill_id
    left join sealed.sealed_bill_clusters as slices
        on corrections.bill_id = slices.bill_id
        and corrections.cluster_id = slices.cluster_id
        and corrections.cost_family = slices.cost_family
    where corrections.bill_id = {bill} and corrections.bill_month = {_literal(month)}
    """


def _draft_charges(con: duckdb.DuckDBPyConnection, month: str) -> str | None:
    """The draft lines of the last build (int_bill_lines_allocated), None when not built."""
    lines = find_relation(con, "int_bill_lines_allocated")
    slices = find_relation(con, "int_bill_targets_monthly")
    if lines is None or slices is None:
        return None
    return f"""
    select
        lines.bill_month, 'draft' as bill_state, cast(null as varchar) as invoice_id,
        false as is_correction, lines.cluster_id, lines.cost_family, lines.line_key,
        lines.line_id, lines.is_unassigned,
        cast(lines.estimated_cost as decimal(38, 6)) as estimated_cost,
        cast(lines.allocation_estimate as decimal(38, 6)) as allocation_estimate,
        cast(lines.billed_cost as decimal(38, 3)) as amount, slices.currency, slices.basis
    from {lines} as lines
    inner join {slices} as slices
        on lines.bill_month = slices.bill_month
        and lines.cluster_id = slices.cluster_id
        and lines.cost_family = slices.cost_family
    where lines.bill_month = {_literal(month)}
    """


def charges_sql(con: duckdb.DuckDBPyConnection, month: str) -> tuple[str, str | None]:
    """(the month's charges: its bill lines, sealed or draft; the sealed bill ID or None).
    A sealed month is exported only if it verifies, as `kubeledger bill` shows it."""
    bill_id = _sealed_bill_id(con, month)
    if bill_id is not None:
        from kubeledger.close.seal import VerificationError
        from kubeledger.close.verify import require_verified

        try:
            require_verified(con, month)
        except VerificationError as exc:
            raise ExportError(f"the FOCUS file is not written: {exc}") from exc
        return _sealed_charges(bill_id, month), bill_id
    return _draft_charges(con, month) or EMPTY_CHARGES, None


def focus_query(
    con: duckdb.DuckDBPyConnection,
    month: str,
    billing_account_id: str = DEFAULT_BILLING_ACCOUNT_ID,
    *,
    file_format: str = "parquet",
) -> str:
    """The SELECT of the FOCUS file of `month` (YYYY-MM)."""
    charges, _ = charges_sql(con, month)
    return _select(charges, month, billing_account_id, file_format)


def _select(charges: str, month: str, billing_account_id: str, file_format: str) -> str:
    first, last = month_bounds(month)
    following = last + dt.timedelta(days=1)

    def moment(day: dt.date) -> str:
        # An explicit UTC offset, so the session's time zone cannot shift it.
        if file_format == "csv":
            return _literal(f"{day.isoformat()}T00:00:00Z")
        return f"timestamptz {_literal(f'{day.isoformat()} 00:00:00+00')}"

    values = {
        ":billing_account_id": _literal(billing_account_id),
        ":period_start": moment(first),
        ":period_end": moment(following),
    }

    def column_type(type_name: str) -> str:
        return "VARCHAR" if (type_name == PERIOD and file_format == "csv") else type_name

    select = ",\n    ".join(
        f'cast({values.get(expression, expression)} as {column_type(type_name)}) as "{name}"'
        for name, type_name, expression in COLUMNS
    )
    return f"""
with charges as ({charges})
select
    {select}
from charges
order by is_correction, invoice_id, cluster_id, cost_family, is_unassigned, line_id
"""


def export_focus(
    con: duckdb.DuckDBPyConnection,
    month: str,
    out_dir: Path,
    file_format: str,
    *,
    billing_account_id: str,
    copy: Callable[..., int],
    charges: tuple[str, str | None] | None = None,
) -> dict[str, Any]:
    """Write the FOCUS file of `month`; `charges` is charges_sql's answer when the caller
    has it already (it verifies a sealed month)."""
    path = Path(out_dir) / f"{FILE_STEM}.{file_format}"
    charges, bill_id = charges if charges is not None else charges_sql(con, month)
    sql = _select(charges, month, billing_account_id, file_format)
    rows = copy(con, sql, path, file_format)
    billed, corrected, state = con.execute(
        f"""select coalesce(sum("BilledCost") filter (where "ChargeClass" is null), 0),
                   coalesce(sum("BilledCost"), 0), min("x_BillState")
            from ({sql})"""
    ).fetchone()
    return {
        "name": FILE_STEM,
        "file": path.name,
        "focus_version": FOCUS_VERSION,
        "source": "sealed bill" if bill_id else "draft bill (int_bill_lines_allocated)",
        "bill_state": state,
        "sealed_bill_id": bill_id,
        "rows": rows,
        "total_billed_cost": str(billed),
        "total_billed_cost_with_corrections": str(corrected),
        "billing_account_id": billing_account_id,
        "columns": [
            {"name": name, "type": "VARCHAR" if (t == PERIOD and file_format == "csv") else t}
            for name, t, _ in COLUMNS
        ],
    }
