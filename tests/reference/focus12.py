"""FOCUS 1.2's column rules, written from the specification (FinOps Open Cost and Usage
Specification 1.2, `specification/columns/*.md` and `specification/attributes/*.md` at tag
v1.2), to check a FOCUS file independently of the exporter: which columns must be present,
each column's data type, its allowed values, and when it may or must be null, per charge
category and charge class. Only facts of the specification are here; `violations` applies
them to rows read from a file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

DECIMAL, STRING, DATETIME, JSON = "Decimal", "String", "Date/Time", "JSON"


@dataclass(frozen=True)
class Column:
    level: str  # Mandatory | Recommended | Conditional
    data_type: str
    allows_nulls: bool


# Every FOCUS 1.2 column: feature level, data type, "Allows nulls" of its content constraints.
COLUMNS: dict[str, Column] = {
    "AvailabilityZone": Column("Recommended", STRING, True),
    "BilledCost": Column("Mandatory", DECIMAL, False),
    "BillingAccountId": Column("Mandatory", STRING, False),
    "BillingAccountName": Column("Mandatory", STRING, True),
    "BillingAccountType": Column("Conditional", STRING, False),
    "BillingCurrency": Column("Mandatory", STRING, False),
    "BillingPeriodEnd": Column("Mandatory", DATETIME, False),
    "BillingPeriodStart": Column("Mandatory", DATETIME, False),
    "CapacityReservationId": Column("Conditional", STRING, True),
    "CapacityReservationStatus": Column("Conditional", STRING, True),
    "ChargeCategory": Column("Mandatory", STRING, False),
    "ChargeClass": Column("Mandatory", STRING, True),
    "ChargeDescription": Column("Mandatory", STRING, True),
    "ChargeFrequency": Column("Recommended", STRING, False),
    "ChargePeriodEnd": Column("Mandatory", DATETIME, False),
    "ChargePeriodStart": Column("Mandatory", DATETIME, False),
    "CommitmentDiscountCategory": Column("Conditional", STRING, True),
    "CommitmentDiscountId": Column("Conditional", STRING, True),
    "CommitmentDiscountName": Column("Conditional", STRING, True),
    "CommitmentDiscountQuantity": Column("Conditional", DECIMAL, True),
    "CommitmentDiscountStatus": Column("Conditional", STRING, True),
    "CommitmentDiscountType": Column("Conditional", STRING, True),
    "CommitmentDiscountUnit": Column("Conditional", STRING, True),
    "ConsumedQuantity": Column("Conditional", DECIMAL, True),
    "ConsumedUnit": Column("Conditional", STRING, True),
    "ContractedCost": Column("Mandatory", DECIMAL, False),
    "ContractedUnitPrice": Column("Conditional", DECIMAL, True),
    "EffectiveCost": Column("Mandatory", DECIMAL, False),
    "InvoiceId": Column("Recommended", STRING, True),
    "InvoiceIssuerName": Column("Mandatory", STRING, False),
    "ListCost": Column("Mandatory", DECIMAL, False),
    "ListUnitPrice": Column("Conditional", DECIMAL, True),
    "PricingCategory": Column("Conditional", STRING, True),
    "PricingCurrency": Column("Conditional", STRING, True),
    "PricingCurrencyContractedUnitPrice": Column("Conditional", DECIMAL, True),
    "PricingCurrencyEffectiveCost": Column("Conditional", DECIMAL, True),
    "PricingCurrencyListUnitPrice": Column("Conditional", DECIMAL, True),
    "PricingQuantity": Column("Mandatory", DECIMAL, True),
    "PricingUnit": Column("Mandatory", STRING, True),
    "ProviderName": Column("Mandatory", STRING, False),
    "PublisherName": Column("Mandatory", STRING, False),
    "RegionId": Column("Conditional", STRING, True),
    "RegionName": Column("Conditional", STRING, True),
    "ResourceId": Column("Conditional", STRING, True),
    "ResourceName": Column("Conditional", STRING, True),
    "ResourceType": Column("Conditional", STRING, True),
    "ServiceCategory": Column("Mandatory", STRING, False),
    "ServiceName": Column("Mandatory", STRING, False),
    "ServiceSubcategory": Column("Recommended", STRING, False),
    "SkuId": Column("Conditional", STRING, True),
    "SkuMeter": Column("Conditional", STRING, True),
    "SkuPriceDetails": Column("Conditional", JSON, True),
    "SkuPriceId": Column("Conditional", STRING, True),
    "SubAccountId": Column("Conditional", STRING, True),
    "SubAccountName": Column("Conditional", STRING, True),
    "SubAccountType": Column("Conditional", STRING, True),
    "Tags": Column("Conditional", JSON, True),
}
MANDATORY = tuple(name for name, column in COLUMNS.items() if column.level == "Mandatory")

CHARGE_CATEGORIES = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
CHARGE_CLASSES = {"Correction"}
CHARGE_FREQUENCIES = {"One-Time", "Recurring", "Usage-Based"}
PRICING_CATEGORIES = {"Standard", "Dynamic", "Committed", "Other"}
SERVICE_CATEGORIES = {
    "AI and Machine Learning",
    "Analytics",
    "Business Applications",
    "Compute",
    "Databases",
    "Developer Tools",
    "Multicloud",
    "Identity",
    "Integration",
    "Internet of Things",
    "Management and Governance",
    "Media",
    "Migration",
    "Mobile",
    "Networking",
    "Security",
    "Storage",
    "Web",
    "Other",
}
# ServiceSubcategory's allowed values, each with its one parent ServiceCategory.
SERVICE_SUBCATEGORIES: dict[str, str] = {
    sub: category
    for category, sub in (
        ("AI and Machine Learning", "AI Platforms"),
        ("AI and Machine Learning", "Bots"),
        ("AI and Machine Learning", "Generative AI"),
        ("AI and Machine Learning", "Machine Learning"),
        ("AI and Machine Learning", "Natural Language Processing"),
        ("AI and Machine Learning", "Other (AI and Machine Learning)"),
        ("Analytics", "Analytics Platforms"),
        ("Analytics", "Business Intelligence"),
        ("Analytics", "Data Processing"),
        ("Analytics", "Search"),
        ("Analytics", "Streaming Analytics"),
        ("Analytics", "Other (Analytics)"),
        ("Business Applications", "Productivity and Collaboration"),
        ("Business Applications", "Other (Business Applications)"),
        ("Compute", "Containers"),
        ("Compute", "End User Computing"),
        ("Compute", "Quantum Compute"),
        ("Compute", "Serverless Compute"),
        ("Compute", "Virtual Machines"),
        ("Compute", "Other (Compute)"),
        ("Databases", "Caching"),
        ("Databases", "Data Warehouses"),
        ("Databases", "Ledger Databases"),
        ("Databases", "NoSQL Databases"),
        ("Databases", "Relational Databases"),
        ("Databases", "Time Series Databases"),
        ("Databases", "Other (Databases)"),
        ("Developer Tools", "Developer Platforms"),
        ("Developer Tools", "Continuous Integration and Deployment"),
        ("Developer Tools", "Development Environments"),
        ("Developer Tools", "Source Code Management"),
        ("Developer Tools", "Quality Assurance"),
        ("Developer Tools", "Other (Developer Tools)"),
        ("Identity", "Identity and Access Management"),
        ("Identity", "Other (Identity)"),
        ("Integration", "API Management"),
        ("Integration", "Messaging"),
        ("Integration", "Workflow Orchestration"),
        ("Integration", "Other (Integration)"),
        ("Internet of Things", "IoT Analytics"),
        ("Internet of Things", "IoT Platforms"),
        ("Internet of Things", "Other (Internet of Things)"),
        ("Management and Governance", "Architecture"),
        ("Management and Governance", "Compliance"),
        ("Management and Governance", "Cost Management"),
        ("Management and Governance", "Data Governance"),
        ("Management and Governance", "Disaster Recovery"),
        ("Management and Governance", "Endpoint Management"),
        ("Management and Governance", "Observability"),
        ("Management and Governance", "Support"),
        ("Management and Governance", "Other (Management and Governance)"),
        ("Media", "Content Creation"),
        ("Media", "Gaming"),
        ("Media", "Media Streaming"),
        ("Media", "Mixed Reality"),
        ("Media", "Other (Media)"),
        ("Migration", "Data Migration"),
        ("Migration", "Resource Migration"),
        ("Migration", "Other (Migration)"),
        ("Mobile", "Other (Mobile)"),
        ("Multicloud", "Multicloud Integration"),
        ("Multicloud", "Other (Multicloud)"),
        ("Networking", "Application Networking"),
        ("Networking", "Content Delivery"),
        ("Networking", "Network Connectivity"),
        ("Networking", "Network Infrastructure"),
        ("Networking", "Network Routing"),
        ("Networking", "Network Security"),
        ("Networking", "Other (Networking)"),
        ("Security", "Secret Management"),
        ("Security", "Security Posture Management"),
        ("Security", "Threat Detection and Response"),
        ("Security", "Other (Security)"),
        ("Storage", "Backup Storage"),
        ("Storage", "Block Storage"),
        ("Storage", "File Storage"),
        ("Storage", "Object Storage"),
        ("Storage", "Storage Platforms"),
        ("Storage", "Other (Storage)"),
        ("Web", "Application Platforms"),
        ("Web", "Other (Web)"),
        ("Other", "Other (Other)"),
    )
}

# DateTimeFormat: ISO 8601 extended, UTC, `YYYY-MM-DDTHH:mm:ssZ` (text files).
DATETIME_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
# NumericFormat: an integer, a decimal or E notation; no `+`, no commas, no symbols.
NUMERIC_TEXT = re.compile(r"^-?\d+(\.\d+)?([eE]-?\d+)?$")
# CurrencyFormat: an ISO 4217 alphabetic code.
CURRENCY = re.compile(r"^[A-Z]{3}$")


def _usage_or_purchase_not_correction(row: dict[str, Any]) -> bool:
    return row.get("ChargeCategory") in ("Usage", "Purchase") and row.get("ChargeClass") != (
        "Correction"
    )


def violations(
    columns: dict[str, str], rows: list[dict[str, Any]], *, text: bool = False
) -> list[str]:
    """Every breach of the FOCUS 1.2 column rules in a file. `columns` maps each column name
    to its physical type, as the caller read it: `decimal`, `string`, `timestamp_utc` (a
    timestamp adjusted to UTC), `timestamp` (a naive one) or anything else; `text` is True
    for a CSV file, whose values are all text and are checked against the value formats."""
    found: list[str] = []
    names = list(columns)
    for name in MANDATORY:
        if name not in columns:
            found.append(f"{name}: mandatory column missing")
    custom = [name for name in names if name not in COLUMNS]
    for name in custom:
        if not name.startswith("x_"):
            found.append(f"{name}: neither a FOCUS column nor an x_ custom column")
    if custom and names.index(custom[0]) < max(
        (names.index(n) for n in names if n in COLUMNS), default=-1
    ):
        found.append("custom columns must come after every FOCUS column")
    for name, physical in columns.items():
        spec = COLUMNS.get(name)
        if spec is None or text:
            continue
        expected = {
            DECIMAL: "decimal",
            STRING: "string",
            JSON: "string",
            DATETIME: "timestamp_utc",
        }[spec.data_type]
        if physical != expected:
            found.append(f"{name}: type {physical}, FOCUS {spec.data_type} needs {expected}")
    for number, row in enumerate(rows, start=1):
        found += [f"row {number}: {problem}" for problem in _row_violations(columns, row, text)]
    return found


def _row_violations(columns: dict[str, str], row: dict[str, Any], text: bool) -> list[str]:
    found: list[str] = []
    for name, value in row.items():
        spec = COLUMNS.get(name)
        if spec is None:
            continue
        if value is None:
            if not spec.allows_nulls:
                found.append(f"{name} is null (not allowed)")
            continue
        if isinstance(value, str) and value == "":
            found.append(f"{name} is an empty string (NullHandling: use null)")
            continue
        if text and spec.data_type == DECIMAL and not NUMERIC_TEXT.match(value):
            found.append(f"{name} {value!r} is not in NumericFormat")
        if text and spec.data_type == DATETIME and not DATETIME_TEXT.match(value):
            found.append(f"{name} {value!r} is not YYYY-MM-DDTHH:mm:ssZ")
        if not text and spec.data_type == DECIMAL and not isinstance(value, Decimal):
            found.append(f"{name} {value!r} is not a decimal")
        if spec.data_type == JSON:
            found += _key_value_violations(name, value)
    category, charge_class = row.get("ChargeCategory"), row.get("ChargeClass")
    if "ChargeCategory" in row and category not in CHARGE_CATEGORIES:
        found.append(f"ChargeCategory {category!r} is not an allowed value")
    if charge_class is not None and charge_class not in CHARGE_CLASSES:
        found.append(f"ChargeClass {charge_class!r} must be null or 'Correction'")
    frequency = row.get("ChargeFrequency")
    if "ChargeFrequency" in row and frequency not in CHARGE_FREQUENCIES:
        found.append(f"ChargeFrequency {frequency!r} is not an allowed value")
    if frequency == "Usage-Based" and category == "Purchase":
        found.append("ChargeFrequency is Usage-Based on a Purchase")
    service = row.get("ServiceCategory")
    if "ServiceCategory" in row and service not in SERVICE_CATEGORIES:
        found.append(f"ServiceCategory {service!r} is not an allowed value")
    sub = row.get("ServiceSubcategory")
    if "ServiceSubcategory" in row:
        if sub not in SERVICE_SUBCATEGORIES:
            found.append(f"ServiceSubcategory {sub!r} is not an allowed value")
        elif SERVICE_SUBCATEGORIES[sub] != service:
            found.append(
                f"ServiceSubcategory {sub!r} belongs to {SERVICE_SUBCATEGORIES[sub]!r}, "
                f"not {service!r}"
            )
    for name in ("BillingCurrency", "PricingCurrency"):
        value = row.get(name)
        if value is not None and not CURRENCY.match(str(value)):
            found.append(f"{name} {value!r} is not an ISO 4217 code")
    # Nullability per charge category and class.
    for name in ("PricingQuantity", "PricingCategory", "ListUnitPrice", "ContractedUnitPrice"):
        if name not in row:
            continue
        if category == "Tax" and row[name] is not None:
            found.append(f"{name} must be null on a Tax charge")
        if _usage_or_purchase_not_correction(row) and row[name] is None:
            found.append(f"{name} must not be null on a {category} charge that is no correction")
    pricing = row.get("PricingCategory")
    if pricing is not None and pricing not in PRICING_CATEGORIES:
        found.append(f"PricingCategory {pricing!r} is not an allowed value")
    if "ConsumedQuantity" in row:
        if category != "Usage" and row["ConsumedQuantity"] is not None:
            found.append("ConsumedQuantity must be null when ChargeCategory is not Usage")
        if (
            category == "Usage"
            and charge_class != "Correction"
            and row.get("CommitmentDiscountStatus") != "Unused"
            and row["ConsumedQuantity"] is None
        ):
            found.append("ConsumedQuantity must not be null on a Usage charge")
    for value, unit in (
        ("PricingQuantity", "PricingUnit"),
        ("ConsumedQuantity", "ConsumedUnit"),
        ("BillingAccountId", "BillingAccountType"),
        ("SubAccountId", "SubAccountType"),
        ("ResourceId", "ResourceType"),
    ):
        if unit in row and (row.get(value) is None) != (row[unit] is None):
            found.append(f"{unit} must be null exactly when {value} is null")
    for kind in ("Billing", "Charge"):
        start, end = row.get(f"{kind}PeriodStart"), row.get(f"{kind}PeriodEnd")
        if start is not None and end is not None and not start < end:
            found.append(f"{kind}PeriodStart {start} is not before {kind}PeriodEnd {end}")
    return found


def _key_value_violations(name: str, value: Any) -> list[str]:
    """KeyValueFormat: a serialized JSON object whose values are scalars."""
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        return [f"{name} is not serialized JSON"]
    if not isinstance(parsed, dict):
        return [f"{name} is not a JSON object"]
    return [
        f"{name}[{key!r}] is not a number, string, true, false or null"
        for key, item in parsed.items()
        if isinstance(item, dict | list)
    ]
