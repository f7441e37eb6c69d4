"""One spec per landing format: raw table, recognising header, required and typed columns.

The contract is docs/landing-and-raw.md; this module is its machine-readable half. Header
names are matched case-insensitively (DuckDB identifiers are), and a raw table's columns are
spelled as listed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kubeledger.load.sql import ident, period_day_sql, period_month_sql

Kind = Literal["usage", "billing", "supplementary"]


@dataclass(frozen=True)
class FormatSpec:
    """How one landing format is recognised, checked and loaded."""

    name: str
    title: str
    raw_table: str
    kind: Kind
    # Every column the format is known to have, in raw-table order (all varchar).
    columns: tuple[str, ...]
    # The file is this format when all columns of any one set are in its header ...
    recognise: tuple[tuple[str, ...], ...]
    # ... and none of these are.
    exclude: tuple[str, ...] = ()
    # Each entry is a set of alternatives: at least one of them must be in the header.
    required: tuple[tuple[str, ...], ...] = ()
    # Typed columns: a non-empty value that does not read sends its row to raw.quarantine.
    timestamps: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    # Optional number columns (unit prices, quantities): a value that does not read is nulled
    # and recorded in raw.quarantine with `row_kept`; the row and its cost are loaded.
    optional_numbers: tuple[str, ...] = ()
    # (header name, column): a file without `column` fills it from its `header name` column
    # (an older schema's name for the same field: Azure `UsageDateTime` -> `Date`).
    aliases: tuple[tuple[str, str], ...] = ()
    # Header columns starting with `fold_prefix` are folded into the JSON object column
    # `fold_column`, keyed by the rest of their name (only when the file has no such column).
    fold_prefix: str | None = None
    fold_column: str | None = None
    # Nested records (Parquet structs, JSON objects) become one column per field, `a.b` -> `a_b`.
    flatten_structs: bool = False
    # Two SQL expressions over the raw columns; rows with the same pair are one delivery unit
    # that a newer file replaces (billing period and account, cluster and hour, file path).
    period_key: tuple[str, str] = ("_source_file", "''")

    @property
    def has_cluster_id(self) -> bool:
        return self.kind == "usage"

    @property
    def qualified_table(self) -> str:
        return f"raw.{self.raw_table}"


@dataclass(frozen=True)
class IgnoredFormat:
    """A known file that kubeledger does not use: skipped, and said so."""

    name: str
    title: str
    recognise: tuple[str, ...]


def _r(*names: str) -> tuple[tuple[str, ...], ...]:
    """Required columns without alternatives."""
    return tuple((n,) for n in names)


def _key(first: str, second: str) -> tuple[str, str]:
    return (f"coalesce({first}, '')", f"coalesce({second}, '')")


# --- koku-metrics-operator reports -------------------------------------------------------------

_KOKU_DATES = ("report_period_start", "report_period_end", "interval_start", "interval_end")
_KOKU_KEY = _key("_cluster_id", "interval_start")

KOKU_POD_USAGE = FormatSpec(
    name="koku_pod_usage",
    title="koku-metrics-operator pod report",
    raw_table="koku_pod_usage",
    kind="usage",
    columns=(
        *_KOKU_DATES,
        "node",
        "namespace",
        "pod",
        "pod_usage_cpu_core_seconds",
        "pod_request_cpu_core_seconds",
        "pod_limit_cpu_core_seconds",
        "pod_usage_memory_byte_seconds",
        "pod_request_memory_byte_seconds",
        "pod_limit_memory_byte_seconds",
        "node_capacity_cpu_cores",
        "node_capacity_cpu_core_seconds",
        "node_capacity_memory_bytes",
        "node_capacity_memory_byte_seconds",
        "node_role",
        "resource_id",
        "pod_labels",
    ),
    recognise=(("pod_usage_cpu_core_seconds",),),
    required=_r(
        "interval_start",
        "interval_end",
        "node",
        "namespace",
        "pod",
        "pod_usage_cpu_core_seconds",
        "pod_request_cpu_core_seconds",
        "pod_usage_memory_byte_seconds",
        "pod_request_memory_byte_seconds",
        "node_capacity_cpu_cores",
        "node_capacity_cpu_core_seconds",
        "node_capacity_memory_bytes",
        "node_capacity_memory_byte_seconds",
        "resource_id",
        "pod_labels",
    ),
    timestamps=_KOKU_DATES,
    numbers=(
        "pod_usage_cpu_core_seconds",
        "pod_request_cpu_core_seconds",
        "pod_limit_cpu_core_seconds",
        "pod_usage_memory_byte_seconds",
        "pod_request_memory_byte_seconds",
        "pod_limit_memory_byte_seconds",
        "node_capacity_cpu_cores",
        "node_capacity_cpu_core_seconds",
        "node_capacity_memory_bytes",
        "node_capacity_memory_byte_seconds",
    ),
    period_key=_KOKU_KEY,
)

KOKU_STORAGE_USAGE = FormatSpec(
    name="koku_storage_usage",
    title="koku-metrics-operator storage report",
    raw_table="koku_storage_usage",
    kind="usage",
    columns=(
        *_KOKU_DATES,
        "namespace",
        "pod",
        "node",
        "persistentvolumeclaim",
        "persistentvolume",
        "storageclass",
        "csi_driver",
        "csi_volume_handle",
        "persistentvolumeclaim_capacity_bytes",
        "persistentvolumeclaim_capacity_byte_seconds",
        "volume_request_storage_byte_seconds",
        "persistentvolumeclaim_usage_byte_seconds",
        "persistentvolume_labels",
        "persistentvolumeclaim_labels",
    ),
    recognise=(("persistentvolumeclaim_capacity_bytes",),),
    required=_r(
        "interval_start",
        "interval_end",
        "namespace",
        "pod",
        "persistentvolumeclaim",
        "persistentvolume",
        "storageclass",
        "persistentvolumeclaim_capacity_bytes",
        "persistentvolumeclaim_capacity_byte_seconds",
        "volume_request_storage_byte_seconds",
        "persistentvolumeclaim_usage_byte_seconds",
    ),
    timestamps=_KOKU_DATES,
    numbers=(
        "persistentvolumeclaim_capacity_bytes",
        "persistentvolumeclaim_capacity_byte_seconds",
        "volume_request_storage_byte_seconds",
        "persistentvolumeclaim_usage_byte_seconds",
    ),
    period_key=_KOKU_KEY,
)

KOKU_NODE_LABELS = FormatSpec(
    name="koku_node_labels",
    title="koku-metrics-operator node-label report",
    raw_table="koku_node_labels",
    kind="usage",
    columns=(*_KOKU_DATES, "node", "node_labels"),
    recognise=(("node_labels",),),
    exclude=("pod",),
    required=_r("interval_start", "node", "node_labels"),
    timestamps=_KOKU_DATES,
    period_key=_KOKU_KEY,
)

KOKU_NAMESPACE_LABELS = FormatSpec(
    name="koku_namespace_labels",
    title="koku-metrics-operator namespace-label report",
    raw_table="koku_namespace_labels",
    kind="usage",
    columns=(*_KOKU_DATES, "namespace", "namespace_labels"),
    recognise=(("namespace_labels",),),
    exclude=("pod",),
    required=_r("interval_start", "namespace", "namespace_labels"),
    timestamps=_KOKU_DATES,
    period_key=_KOKU_KEY,
)

# The GPU report: one row per pod, GPU (or MIG instance) and hour; `gpu_pod_uptime` is the
# seconds of the hour the pod held it. The MIG columns and `gpu_max_slices` are optional (older
# operators omit them).
KOKU_GPU_USAGE = FormatSpec(
    name="koku_gpu_usage",
    title="koku-metrics-operator GPU report",
    raw_table="koku_gpu_usage",
    kind="usage",
    columns=(
        *_KOKU_DATES,
        "node",
        "namespace",
        "pod",
        "gpu_uuid",
        "gpu_model_name",
        "gpu_vendor_name",
        "gpu_memory_capacity_mib",
        "gpu_pod_uptime",
        "gpu_max_slices",
        "mig_instance_id",
        "mig_profile",
        "mig_strategy",
    ),
    recognise=(("gpu_uuid", "gpu_pod_uptime"),),
    required=_r(
        "interval_start",
        "node",
        "namespace",
        "pod",
        "gpu_uuid",
        "gpu_model_name",
        "gpu_vendor_name",
        "gpu_memory_capacity_mib",
        "gpu_pod_uptime",
    ),
    timestamps=_KOKU_DATES,
    numbers=("gpu_memory_capacity_mib", "gpu_pod_uptime", "gpu_max_slices"),
    period_key=_KOKU_KEY,
)

# --- kubeledger's own supplementary CSVs -------------------------------------------------------

_BY_PATH = _key("_source_file", "''")

CLUSTER_NODES = FormatSpec(
    name="cluster_nodes",
    title="kubeledger nodes CSV",
    raw_table="cluster_nodes",
    kind="supplementary",
    columns=("cluster_id", "node", "provider_id", "first_seen", "last_seen"),
    recognise=(("provider_id", "first_seen"),),
    required=_r("cluster_id", "node", "provider_id"),
    timestamps=("first_seen", "last_seen"),
    period_key=_BY_PATH,
)

CLUSTER_OWNERS = FormatSpec(
    name="cluster_owners",
    title="kubeledger owners CSV",
    raw_table="cluster_owners",
    kind="supplementary",
    columns=("cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name"),
    recognise=(("owner_kind", "owner_name"),),
    required=_r("cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name"),
    period_key=_BY_PATH,
)

CLUSTER_LB_SERVICES = FormatSpec(
    name="cluster_lb_services",
    title="kubeledger load-balancer services CSV",
    raw_table="cluster_lb_services",
    kind="supplementary",
    columns=("cluster_id", "namespace", "service", "load_balancer_id"),
    recognise=(("load_balancer_id", "service"),),
    required=_r("cluster_id", "namespace", "service", "load_balancer_id"),
    period_key=_BY_PATH,
)

RATE_CARD = FormatSpec(
    name="rate_card",
    title="kubeledger rate card CSV",
    raw_table="rate_card",
    kind="supplementary",
    columns=(
        "cluster_id",
        "resource",
        "selector_type",
        "selector",
        "price",
        "effective_from",
        "unit",
        "currency",
    ),
    recognise=(("selector_type", "price"),),
    required=_r("cluster_id", "resource", "selector_type", "selector", "price", "effective_from"),
    timestamps=("effective_from",),
    numbers=("price",),
    period_key=_BY_PATH,
)

# --- AWS Cost and Usage Report -----------------------------------------------------------------

_AWS_LEGACY_COLUMNS = (
    "identity/LineItemId",
    "identity/TimeInterval",
    "bill/InvoiceId",
    "bill/InvoicingEntity",
    "bill/BillingEntity",
    "bill/BillType",
    "bill/PayerAccountId",
    "bill/BillingPeriodStartDate",
    "bill/BillingPeriodEndDate",
    "lineItem/UsageAccountId",
    "lineItem/LineItemType",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
    "lineItem/ProductCode",
    "lineItem/UsageType",
    "lineItem/Operation",
    "lineItem/AvailabilityZone",
    "lineItem/ResourceId",
    "lineItem/UsageAmount",
    "lineItem/NormalizationFactor",
    "lineItem/NormalizedUsageAmount",
    "lineItem/CurrencyCode",
    "lineItem/UnblendedRate",
    "lineItem/UnblendedCost",
    "lineItem/BlendedRate",
    "lineItem/BlendedCost",
    "lineItem/NetUnblendedRate",
    "lineItem/NetUnblendedCost",
    "lineItem/LineItemDescription",
    "lineItem/TaxType",
    "lineItem/LegalEntity",
    "product/ProductName",
    "product/productFamily",
    "product/servicecode",
    "product/sku",
    "product/instanceType",
    "product/instanceFamily",
    "product/region",
    "product/regionCode",
    "product/location",
    "product/operatingSystem",
    "product/usagetype",
    "product/operation",
    "product/vcpu",
    "product/memory",
    "product/volumeApiName",
    "product/volumeType",
    "product/storageMedia",
    "pricing/RateCode",
    "pricing/RateId",
    "pricing/currency",
    "pricing/publicOnDemandCost",
    "pricing/publicOnDemandRate",
    "pricing/term",
    "pricing/unit",
    "pricing/purchaseOption",
    "pricing/LeaseContractLength",
    "pricing/OfferingClass",
    "reservation/AmortizedUpfrontCostForUsage",
    "reservation/AmortizedUpfrontFeeForBillingPeriod",
    "reservation/EffectiveCost",
    "reservation/EndTime",
    "reservation/ModificationStatus",
    "reservation/NetAmortizedUpfrontCostForUsage",
    "reservation/NetAmortizedUpfrontFeeForBillingPeriod",
    "reservation/NetEffectiveCost",
    "reservation/NetRecurringFeeForUsage",
    "reservation/NetUnusedAmortizedUpfrontFeeForBillingPeriod",
    "reservation/NetUnusedRecurringFee",
    "reservation/NetUpfrontValue",
    "reservation/NormalizedUnitsPerReservation",
    "reservation/NumberOfReservations",
    "reservation/RecurringFeeForUsage",
    "reservation/ReservationARN",
    "reservation/StartTime",
    "reservation/SubscriptionId",
    "reservation/TotalReservedNormalizedUnits",
    "reservation/TotalReservedUnits",
    "reservation/UnitsPerReservation",
    "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
    "reservation/UnusedNormalizedUnitQuantity",
    "reservation/UnusedQuantity",
    "reservation/UnusedRecurringFee",
    "reservation/UpfrontValue",
    "savingsPlan/TotalCommitmentToDate",
    "savingsPlan/SavingsPlanARN",
    "savingsPlan/SavingsPlanRate",
    "savingsPlan/UsedCommitment",
    "savingsPlan/SavingsPlanEffectiveCost",
    "savingsPlan/AmortizedUpfrontCommitmentForBillingPeriod",
    "savingsPlan/RecurringCommitmentForBillingPeriod",
    "savingsPlan/StartTime",
    "savingsPlan/EndTime",
    "savingsPlan/InstanceTypeFamily",
    "savingsPlan/OfferingType",
    "savingsPlan/PaymentOption",
    "savingsPlan/PurchaseTerm",
    "savingsPlan/Region",
    "savingsPlan/NetSavingsPlanEffectiveCost",
    "savingsPlan/NetAmortizedUpfrontCommitmentForBillingPeriod",
    "savingsPlan/NetRecurringCommitmentForBillingPeriod",
    "discount/EdpDiscount",
    "discount/PrivateRateDiscount",
    "discount/BundledDiscount",
    "discount/TotalDiscount",
    "splitLineItem/ParentResourceId",
    "splitLineItem/SplitUsage",
    "splitLineItem/SplitUsageRatio",
    "splitLineItem/SplitCost",
    "splitLineItem/UnusedCost",
    "splitLineItem/NetSplitCost",
    "splitLineItem/NetUnusedCost",
    "splitLineItem/ReservedUsage",
    "splitLineItem/ActualUsage",
    "splitLineItem/PublicOnDemandSplitCost",
    "splitLineItem/PublicOnDemandUnusedCost",
    "resourceTags",
)

_AWS_LEGACY_REQUIRED = (
    "bill/PayerAccountId",
    "bill/BillingPeriodStartDate",
    "lineItem/UsageAccountId",
    "lineItem/LineItemType",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
    "lineItem/ProductCode",
    "lineItem/UsageType",
    "lineItem/ResourceId",
    "lineItem/UsageAmount",
    "lineItem/UnblendedCost",
)

_AWS_LEGACY_TIMESTAMPS = (
    "bill/BillingPeriodStartDate",
    "bill/BillingPeriodEndDate",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
)

# The money columns the pipeline reads (an unreadable value quarantines its row), and the
# quantities (an unreadable value is nulled); other numeric-looking columns stay text.
_AWS_LEGACY_QUANTITIES = ("lineItem/UsageAmount", "lineItem/NormalizedUsageAmount")
_AWS_LEGACY_NUMBERS = (
    "lineItem/UnblendedCost",
    "lineItem/BlendedCost",
    "lineItem/NetUnblendedCost",
    "pricing/publicOnDemandCost",
    "reservation/AmortizedUpfrontFeeForBillingPeriod",
    "reservation/EffectiveCost",
    "reservation/NetEffectiveCost",
    "reservation/RecurringFeeForUsage",
    "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
    "reservation/NetUnusedAmortizedUpfrontFeeForBillingPeriod",
    "reservation/UnusedRecurringFee",
    "reservation/NetUnusedRecurringFee",
    "savingsPlan/SavingsPlanEffectiveCost",
    "savingsPlan/NetSavingsPlanEffectiveCost",
    "savingsPlan/AmortizedUpfrontCommitmentForBillingPeriod",
    "savingsPlan/RecurringCommitmentForBillingPeriod",
    "savingsPlan/UsedCommitment",
    "savingsPlan/TotalCommitmentToDate",
    "discount/TotalDiscount",
    "splitLineItem/SplitCost",
    "splitLineItem/UnusedCost",
)


def _snake(legacy: str) -> str:
    """`lineItem/UsageStartDate` -> `line_item_usage_start_date` (CUR 2.0 naming)."""
    special = {
        "reservation/ReservationARN": "reservation_reservation_a_r_n",
        "savingsPlan/SavingsPlanARN": "savings_plan_savings_plan_a_r_n",
        "product/ProductName": "product_product_name",
        "product/productFamily": "product_product_family",
        "product/usagetype": "product_usagetype",
        "product/servicecode": "product_servicecode",
        "resourceTags": "resource_tags",
    }
    if legacy in special:
        return special[legacy]
    out = []
    for i, ch in enumerate(legacy.replace("/", "_")):
        if ch.isupper() and i > 0 and out[-1] != "_":
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


_AWS_CUR2_COLUMNS = (
    *(_snake(c) for c in _AWS_LEGACY_COLUMNS),
    "bill_payer_account_name",
    "line_item_usage_account_name",
    "product",
    "cost_category",
    "discount",
)

AWS_CUR_LEGACY = FormatSpec(
    name="aws_cur_legacy",
    title="AWS Cost and Usage Report (legacy)",
    raw_table="aws_cur_legacy",
    kind="billing",
    columns=_AWS_LEGACY_COLUMNS,
    recognise=(("lineItem/UsageStartDate",),),
    required=_r(*_AWS_LEGACY_REQUIRED),
    timestamps=_AWS_LEGACY_TIMESTAMPS,
    numbers=_AWS_LEGACY_NUMBERS,
    optional_numbers=_AWS_LEGACY_QUANTITIES,
    fold_prefix="resourceTags/",
    fold_column="resourceTags",
    period_key=_key(
        ident("bill/PayerAccountId"), period_day_sql(ident("bill/BillingPeriodStartDate"))
    ),
)

AWS_CUR2 = FormatSpec(
    name="aws_cur2",
    title="AWS Cost and Usage Report 2.0 (Data Exports)",
    raw_table="aws_cur2",
    kind="billing",
    columns=_AWS_CUR2_COLUMNS,
    recognise=(("line_item_usage_start_date",),),
    required=_r(*(_snake(c) for c in _AWS_LEGACY_REQUIRED)),
    timestamps=tuple(_snake(c) for c in _AWS_LEGACY_TIMESTAMPS),
    numbers=tuple(_snake(c) for c in _AWS_LEGACY_NUMBERS),
    optional_numbers=tuple(_snake(c) for c in _AWS_LEGACY_QUANTITIES),
    # Legacy CUR delivered as Parquet (Athena naming) writes one `resource_tags_<key>` column
    # per tag instead of the CUR 2.0 map.
    fold_prefix="resource_tags_",
    fold_column="resource_tags",
    period_key=_key("bill_payer_account_id", period_day_sql("bill_billing_period_start_date")),
)

# --- Google Cloud detailed usage cost export ---------------------------------------------------

GCP_BILLING_EXPORT = FormatSpec(
    name="gcp_billing_export",
    title="Google Cloud detailed usage cost export",
    raw_table="gcp_billing_export",
    kind="billing",
    columns=(
        "billing_account_id",
        "service_id",
        "service_description",
        "sku_id",
        "sku_description",
        "usage_start_time",
        "usage_end_time",
        "project_id",
        "project_number",
        "project_name",
        "project_labels",
        "project_ancestry_numbers",
        "project_ancestors",
        "labels",
        "system_labels",
        "tags",
        "location_location",
        "location_country",
        "location_region",
        "location_zone",
        "resource_name",
        "resource_global_name",
        "price_effective_price",
        "price_tier_start_amount",
        "price_unit",
        "price_pricing_unit_quantity",
        "subscription_instance_id",
        "transaction_type",
        "seller_name",
        "export_time",
        "cost",
        "currency",
        "currency_conversion_rate",
        "usage_amount",
        "usage_unit",
        "usage_amount_in_pricing_units",
        "usage_pricing_unit",
        "credits",
        "invoice_month",
        "invoice_publisher_type",
        "cost_type",
        "adjustment_info_id",
        "adjustment_info_description",
        "adjustment_info_mode",
        "adjustment_info_type",
        "cost_at_list",
        "consumption_model_id",
        "consumption_model_description",
    ),
    recognise=(("billing_account_id", "usage_start_time"),),
    required=_r(
        "billing_account_id",
        "service_description",
        "sku_description",
        "usage_start_time",
        "usage_end_time",
        "cost",
        "currency",
    ),
    timestamps=("usage_start_time", "usage_end_time", "export_time"),
    numbers=("cost", "cost_at_list"),
    optional_numbers=("currency_conversion_rate", "usage_amount", "usage_amount_in_pricing_units"),
    flatten_structs=True,
    period_key=_key("billing_account_id", "invoice_month"),
)

# --- Azure cost details (amortized) ------------------------------------------------------------

# Older Azure schemas name some fields differently; each fills today's column when a file lacks
# it: the legacy pay-as-you-go / EA usage export (`UsageDateTime`, `PreTaxCost`,
# `SubscriptionGuid`, `UsageQuantity`, `Currency`) and Microsoft Customer Agreement files that
# name the resource `InstanceName`.
_AZURE_ALIASES = (
    ("UsageDateTime", "Date"),
    ("UsageDate", "Date"),
    ("PreTaxCost", "Cost"),
    ("SubscriptionGuid", "SubscriptionId"),
    ("UsageQuantity", "Quantity"),
    ("ResourceRate", "EffectivePrice"),
    ("Currency", "BillingCurrency"),
    ("InstanceName", "ResourceId"),
)

AZURE_COST_DETAILS = FormatSpec(
    name="azure_cost_details",
    title="Azure cost details export (amortized)",
    raw_table="azure_cost_details",
    kind="billing",
    columns=(
        "InvoiceId",
        "PreviousInvoiceId",
        "BillingAccountId",
        "BillingAccountName",
        "BillingProfileId",
        "BillingProfileName",
        "InvoiceSectionId",
        "InvoiceSectionName",
        "PartnerName",
        "ResellerName",
        "ResellerMpnId",
        "DepartmentName",
        "AccountName",
        "AccountOwnerId",
        "CostCenter",
        "BillingPeriodStartDate",
        "BillingPeriodEndDate",
        "ServicePeriodStartDate",
        "ServicePeriodEndDate",
        "Date",
        "ServiceFamily",
        "ProductOrderId",
        "ProductOrderName",
        "ConsumedService",
        "MeterId",
        "MeterName",
        "MeterCategory",
        "MeterSubCategory",
        "MeterRegion",
        "ProductId",
        "ProductName",
        "Product",
        "PartNumber",
        "SubscriptionId",
        "SubscriptionGuid",
        "SubscriptionName",
        "PublisherType",
        "PublisherId",
        "PublisherName",
        "PlanName",
        "OfferId",
        "ResourceGroup",
        "ResourceGroupName",
        "ResourceId",
        "InstanceId",
        "ResourceName",
        "ResourceType",
        "ResourceLocation",
        "Location",
        "AvailabilityZone",
        "UnitOfMeasure",
        "Quantity",
        "EffectivePrice",
        "UnitPrice",
        "PayGPrice",
        "ChargeType",
        "Frequency",
        "Term",
        "PricingModel",
        "ReservationId",
        "ReservationName",
        "BenefitId",
        "BenefitName",
        "CostAllocationRuleName",
        "IsAzureCreditEligible",
        "BillingCurrency",
        "BillingCurrencyCode",
        "PricingCurrency",
        "PricingCurrencyCode",
        "ExchangeRatePricingToBilling",
        "ExchangeRateDate",
        "CostInBillingCurrency",
        "CostInPricingCurrency",
        "CostInUsd",
        "PaygCostInBillingCurrency",
        "PaygCostInUsd",
        "Cost",
        "ServiceInfo1",
        "ServiceInfo2",
        "AdditionalInfo",
        "Tags",
    ),
    # A cost column next to MeterCategory is enough to say Azure, so that a file without a
    # resource column is named as an Azure file missing it.
    recognise=(
        ("MeterCategory", "ResourceId"),
        ("MeterCategory", "InstanceId"),
        ("MeterCategory", "InstanceName"),
        ("MeterCategory", "CostInBillingCurrency"),
        ("MeterCategory", "Cost"),
        ("MeterCategory", "PreTaxCost"),
    ),
    required=(
        ("Date",),
        ("SubscriptionId",),
        ("ResourceId", "InstanceId"),
        ("MeterCategory",),
        ("CostInBillingCurrency", "Cost"),
    ),
    aliases=_AZURE_ALIASES,
    timestamps=("Date", "BillingPeriodStartDate", "BillingPeriodEndDate"),
    numbers=(
        "CostInBillingCurrency",
        "CostInPricingCurrency",
        "CostInUsd",
        "PaygCostInBillingCurrency",
        "PaygCostInUsd",
        "Cost",
    ),
    optional_numbers=(
        "Quantity",
        "EffectivePrice",
        "UnitPrice",
        "PayGPrice",
        "ExchangeRatePricingToBilling",
    ),
    period_key=_key(
        "coalesce(nullif(trim(BillingAccountId), ''), SubscriptionId)",
        f"coalesce({period_day_sql('BillingPeriodStartDate')}, {period_month_sql('Date')})",
    ),
)

# --- FOCUS 1.0 - 1.2 ---------------------------------------------------------------------------

FOCUS_BILLING = FormatSpec(
    name="focus_billing",
    title="FOCUS 1.0-1.2 export",
    raw_table="focus_billing",
    kind="billing",
    columns=(
        "BillingAccountId",
        "BillingAccountName",
        "BillingAccountType",
        "SubAccountId",
        "SubAccountName",
        "SubAccountType",
        "BillingPeriodStart",
        "BillingPeriodEnd",
        "ChargePeriodStart",
        "ChargePeriodEnd",
        "ChargeCategory",
        "ChargeClass",
        "ChargeDescription",
        "ChargeFrequency",
        "BilledCost",
        "EffectiveCost",
        "ListCost",
        "ContractedCost",
        "BillingCurrency",
        "ListUnitPrice",
        "ContractedUnitPrice",
        "ConsumedQuantity",
        "ConsumedUnit",
        "PricingQuantity",
        "PricingUnit",
        "PricingCategory",
        "PricingCurrency",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
        "CommitmentDiscountCategory",
        "CommitmentDiscountId",
        "CommitmentDiscountName",
        "CommitmentDiscountQuantity",
        "CommitmentDiscountStatus",
        "CommitmentDiscountType",
        "CommitmentDiscountUnit",
        "CapacityReservationId",
        "CapacityReservationStatus",
        "InvoiceId",
        "InvoiceIssuerName",
        "ProviderName",
        "PublisherName",
        "AvailabilityZone",
        "RegionId",
        "RegionName",
        "ResourceId",
        "ResourceName",
        "ResourceType",
        "ServiceCategory",
        "ServiceSubcategory",
        "ServiceName",
        "SkuId",
        "SkuMeter",
        "SkuPriceDetails",
        "SkuPriceId",
        "Tags",
    ),
    recognise=(("ChargePeriodStart", "EffectiveCost"),),
    required=_r(
        "BillingAccountId",
        "ChargePeriodStart",
        "ChargePeriodEnd",
        "ChargeCategory",
        "BilledCost",
        "EffectiveCost",
        "BillingCurrency",
        "ResourceId",
    ),
    timestamps=("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"),
    numbers=(
        "BilledCost",
        "EffectiveCost",
        "ListCost",
        "ContractedCost",
        "PricingCurrencyEffectiveCost",
    ),
    optional_numbers=(
        "ListUnitPrice",
        "ContractedUnitPrice",
        "ConsumedQuantity",
        "PricingQuantity",
        "CommitmentDiscountQuantity",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyListUnitPrice",
    ),
    period_key=_key(
        "BillingAccountId",
        f"coalesce({period_day_sql('BillingPeriodStart')}, "
        f"{period_month_sql('ChargePeriodStart')})",
    ),
)

# Detection order matters only where headers overlap; the first match wins.
FORMATS: tuple[FormatSpec, ...] = (
    KOKU_POD_USAGE,
    KOKU_STORAGE_USAGE,
    KOKU_NODE_LABELS,
    KOKU_NAMESPACE_LABELS,
    KOKU_GPU_USAGE,
    CLUSTER_NODES,
    CLUSTER_OWNERS,
    CLUSTER_LB_SERVICES,
    AWS_CUR_LEGACY,
    AWS_CUR2,
    GCP_BILLING_EXPORT,
    AZURE_COST_DETAILS,
    FOCUS_BILLING,
    RATE_CARD,
)

# Reports the koku-metrics-operator writes next to the ones kubeledger reads. They are
# recognised (checked before FORMATS) so that an unpacked operator package loads as it is.
IGNORED_FORMATS: tuple[IgnoredFormat, ...] = (
    IgnoredFormat(
        "koku_ros_container",
        "koku resource-optimization container report",
        ("cpu_request_container_avg",),
    ),
    IgnoredFormat(
        "koku_ros_namespace",
        "koku resource-optimization namespace report",
        ("cpu_request_namespace_sum",),
    ),
    IgnoredFormat("koku_vm_usage", "koku virtual-machine report", ("vm_cpu_usage_total_seconds",)),
)

FORMATS_BY_NAME: dict[str, FormatSpec] = {spec.name: spec for spec in FORMATS}


# Where a row says which UTC day and which cluster it feeds: (day column, cluster column,
# billing account expression). A quarantined row is counted in data health there, from what
# of it reads (a usage report's cluster is its folder's; a billing row's, its account's).
ROW_ADDRESS: dict[str, tuple[str | None, str | None, str | None]] = {
    "koku_pod_usage": ("interval_start", None, None),
    "koku_storage_usage": ("interval_start", None, None),
    "koku_node_labels": ("interval_start", None, None),
    "koku_namespace_labels": ("interval_start", None, None),
    "koku_gpu_usage": ("interval_start", None, None),
    "cluster_nodes": (None, "cluster_id", None),
    "cluster_owners": (None, "cluster_id", None),
    "cluster_lb_services": (None, "cluster_id", None),
    "rate_card": (None, "cluster_id", None),
    "aws_cur_legacy": ("lineItem/UsageStartDate", None, '"bill/PayerAccountId"'),
    "aws_cur2": ("line_item_usage_start_date", None, "bill_payer_account_id"),
    "gcp_billing_export": ("usage_start_time", None, "billing_account_id"),
    "azure_cost_details": (
        "Date",
        None,
        "coalesce(nullif(trim(BillingAccountId), ''), SubscriptionId)",
    ),
    "focus_billing": ("ChargePeriodStart", None, "BillingAccountId"),
}
