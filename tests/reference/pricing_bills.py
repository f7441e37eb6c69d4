"""Every bill format normalized to one frame of billing lines for the reference pricing
(SPEC §3.2), with restatements applied (docs/landing-and-raw.md). Imports nothing of
kubeledger.

One row per bill line:
    fmt, provider, account, sub_account, period, delivery, resource_id, rkey (lower case),
    start, end (UTC), charge_date (UTC day of start), is_usage (counts for "billed through"),
    kind (instance | volume | load_balancer | data_transfer | control_plane |
          commitment_fee | split | account_level | other),
    cost (net amortized at resource level; 0 for rows that are 0 there), hours (billed
    instance hours when the bill carries them), instance_type, region, purchase_option,
    tags (dict of normalized key → value), cud (Google committed-use credits, negative),
    cluster_name (the cluster an EKS fee names).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from tests.reference.pricing_inputs import LandingFile, read_json_records, read_table, to_utc

LINE_COLUMNS = [
    "fmt",
    "provider",
    "account",
    "sub_account",
    "period",
    "delivery",
    "resource_id",
    "rkey",
    "start",
    "end",
    "charge_date",
    "is_usage",
    "kind",
    "cost",
    "hours",
    "instance_type",
    "region",
    "purchase_option",
    "tags",
    "cud",
    "cluster_name",
]


def normalize_tag_key(key: str) -> str:
    """docs/config-tables.md: lower case, a leading `user:` / `user_` dropped, every character
    outside [a-z0-9] replaced by `_`."""
    key = key.lower()
    for prefix in ("user:", "user_"):
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    return re.sub(r"[^a-z0-9]", "_", key)


def _tags_from_json(text) -> dict[str, str]:
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return {}
    raw = str(text).strip()
    if not raw:
        return {}
    if not raw.startswith("{") and not raw.startswith("["):
        raw = "{" + raw + "}"  # Azure writes Tags without braces in some exports
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    if isinstance(value, list):
        value = {item.get("key"): item.get("value") for item in value if isinstance(item, dict)}
    return {normalize_tag_key(str(k)): ("" if v is None else str(v)) for k, v in value.items()}


def _num(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce")


def _delivery_key(file: LandingFile) -> str:
    """Parts of one export delivery: same folder, same name up to a part number (a run of at
    most five digits, or of zeros only). SPEC silent; see docs/landing-and-raw.md."""
    name = file.path.name.split(".")[0]
    name = re.sub(r"(\d{1,5}|0+)$", "", name)
    return f"{file.delivery}/{name}"


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame({column: pd.Series(dtype=object) for column in LINE_COLUMNS})
    for column in ("start", "end"):
        frame[column] = pd.Series(dtype="datetime64[ns, UTC]")
    for column in ("cost", "hours", "cud"):
        frame[column] = pd.Series(dtype=float)
    frame["is_usage"] = pd.Series(dtype=bool)
    return frame


def _finish(out: pd.DataFrame) -> pd.DataFrame:
    out["charge_date"] = out["start"].dt.date
    return out[LINE_COLUMNS]


# --------------------------------------------------------------------------- AWS

AWS_COLUMNS = {
    # CUR 2.0 name: legacy name
    "bill_payer_account_id": "bill/PayerAccountId",
    "bill_billing_period_start_date": "bill/BillingPeriodStartDate",
    "line_item_usage_account_id": "lineItem/UsageAccountId",
    "line_item_line_item_type": "lineItem/LineItemType",
    "line_item_usage_start_date": "lineItem/UsageStartDate",
    "line_item_usage_end_date": "lineItem/UsageEndDate",
    "line_item_product_code": "lineItem/ProductCode",
    "line_item_usage_type": "lineItem/UsageType",
    "line_item_operation": "lineItem/Operation",
    "line_item_resource_id": "lineItem/ResourceId",
    "line_item_usage_amount": "lineItem/UsageAmount",
    "line_item_unblended_cost": "lineItem/UnblendedCost",
    "line_item_net_unblended_cost": "lineItem/NetUnblendedCost",
    "line_item_availability_zone": "lineItem/AvailabilityZone",
    "product_product_family": "product/productFamily",
    "product_instance_type": "product/instanceType",
    "product_region": "product/region",
    "product_region_code": "product/regionCode",
    "reservation_reservation_a_r_n": "reservation/ReservationARN",
    "reservation_effective_cost": "reservation/EffectiveCost",
    "reservation_net_effective_cost": "reservation/NetEffectiveCost",
    "savings_plan_savings_plan_a_r_n": "savingsPlan/SavingsPlanARN",
    "savings_plan_savings_plan_effective_cost": "savingsPlan/SavingsPlanEffectiveCost",
    "savings_plan_net_savings_plan_effective_cost": "savingsPlan/NetSavingsPlanEffectiveCost",
    "resource_tags": "resourceTags",
}
# SPEC §3.2: the line types whose amount is a resource's net amortized cost, (net, non-net).
AWS_RESOURCE_COST = {
    "Usage": ("line_item_net_unblended_cost", "line_item_unblended_cost"),
    "DiscountedUsage": ("reservation_net_effective_cost", "reservation_effective_cost"),
    "SavingsPlanCoveredUsage": (
        "savings_plan_net_savings_plan_effective_cost",
        "savings_plan_savings_plan_effective_cost",
    ),
}
AWS_SPLIT_OPERATIONS = {"EKSPod-EC2", "ECSTask-EC2"}


def _aws_frame(file: LandingFile, legacy_names: bool) -> pd.DataFrame:
    """One CUR file with CUR 2.0 column names and a tags JSON column."""
    lower = {column.lower(): column for column in file.columns}
    if legacy_names:
        wanted = [legacy for legacy in AWS_COLUMNS.values() if legacy != "resourceTags"]
        frame = read_table(file, wanted).rename(columns={v: k for k, v in AWS_COLUMNS.items()})
        tag_columns = [c for c in file.columns if c.lower().startswith("resourcetags/")]
        prefix = len("resourceTags/")
    else:
        wanted = [name for name in AWS_COLUMNS if name != "resource_tags"]
        if "resource_tags" in lower:
            wanted.append("resource_tags")
        frame = read_table(file, wanted)
        tag_columns = [
            c
            for c in file.columns
            if c.lower().startswith("resource_tags_") and c.lower() != "resource_tags"
        ]
        prefix = len("resource_tags_")
    tags = frame["resource_tags"].map(_tags_from_json) if "resource_tags" in frame else None
    if tag_columns:
        extra = read_table(file, tag_columns)
        per_row = [
            {
                normalize_tag_key(c[prefix:]): v
                for c, v in zip(tag_columns, values, strict=True)
                if v
            }
            for values in extra.itertuples(index=False)
        ]
        if tags is None:
            tags = pd.Series(per_row, index=frame.index)
        else:
            tags = pd.Series(
                [{**a, **b} for a, b in zip(tags, per_row, strict=True)], index=frame.index
            )
    frame["tags"] = tags if tags is not None else [{} for _ in range(len(frame))]
    return frame


def aws_lines(files: list[tuple[LandingFile, bool]]) -> pd.DataFrame:
    frames = []
    for file, legacy in files:
        frame = _aws_frame(file, legacy)
        frame["delivery"] = _delivery_key(file)
        # The loader keeps legacy CSV and CUR 2.0 in two raw tables; a restatement replaces
        # rows of its own table (docs/landing-and-raw.md).
        frame["fmt"] = "aws_legacy" if legacy else "aws_cur2"
        frames.append(frame)
    if not frames:
        return _empty()
    bill = pd.concat(frames, ignore_index=True)
    out = pd.DataFrame(index=bill.index)
    out["fmt"] = bill["fmt"]
    out["provider"] = "aws"
    out["account"] = bill["bill_payer_account_id"]
    out["sub_account"] = bill["line_item_usage_account_id"]
    period = bill["bill_billing_period_start_date"].fillna("").str[:10]
    out["start"] = to_utc(bill["line_item_usage_start_date"])
    out["end"] = to_utc(bill["line_item_usage_end_date"])
    month_of_start = out["start"].dt.strftime("%Y-%m-01")
    out["period"] = period.where(period != "", month_of_start)
    out["delivery"] = bill["delivery"]
    out["resource_id"] = bill["line_item_resource_id"]
    out["rkey"] = bill["line_item_resource_id"].fillna("").str.lower()
    line_type = bill["line_item_line_item_type"].fillna("")
    operation = bill["line_item_operation"].fillna("")
    usage_type = bill["line_item_usage_type"].fillna("")
    product = bill["line_item_product_code"].fillna("")
    family = bill["product_product_family"].fillna("")
    cost = pd.Series(0.0, index=bill.index)
    for kind, (net, gross) in AWS_RESOURCE_COST.items():
        rows = line_type == kind
        # SPEC §3.2: the net_ columns exist only when the account has a discount that period;
        # otherwise the non-net column.
        value = _num(bill[net]).where(_num(bill[net]).notna(), _num(bill[gross]))
        cost = cost.where(~rows, value.fillna(0.0))
    out["cost"] = cost
    is_resource_cost = line_type.isin(AWS_RESOURCE_COST.keys())
    out["is_usage"] = is_resource_cost
    rid = out["rkey"]
    data_transfer = (
        usage_type.str.contains("DataTransfer", case=False)
        | family.str.lower().eq("data transfer")
        | operation.str.startswith("InterZone")
    )
    eks_fee = product.eq("AmazonEKS") & usage_type.str.contains("AmazonEKS-Hours", case=False)
    kind = np.select(
        [
            ~is_resource_cost,
            operation.isin(AWS_SPLIT_OPERATIONS),
            eks_fee,
            data_transfer & rid.str.startswith("i-"),
            data_transfer,
            rid.str.startswith("i-"),
            rid.str.startswith("vol-") | usage_type.str.contains("EBS:VolumeUsage"),
            product.eq("AWSELB") | rid.str.contains(":elasticloadbalancing:"),
        ],
        [
            "account_level",
            "split",
            "control_plane",
            "data_transfer",
            "other",
            "instance",
            "volume",
            "load_balancer",
        ],
        default="other",
    )
    out["kind"] = kind
    hours = _num(bill["line_item_usage_amount"]).where(
        usage_type.str.contains("BoxUsage|SpotUsage|HeavyUsage|DedicatedUsage")
        | operation.str.startswith("RunInstances")
    )
    out["hours"] = hours.where(out["kind"] == "instance")
    out["instance_type"] = bill["product_instance_type"]
    region = bill["product_region_code"].where(
        bill["product_region_code"].notna(), bill["product_region"]
    )
    out["region"] = region
    out["purchase_option"] = np.select(
        [
            bill["savings_plan_savings_plan_a_r_n"].fillna("").ne("")
            | line_type.eq("SavingsPlanCoveredUsage"),
            bill["reservation_reservation_a_r_n"].fillna("").ne("")
            | line_type.eq("DiscountedUsage"),
            usage_type.str.contains("Spot"),
        ],
        ["savings_plan", "reserved", "spot"],
        default="on_demand",
    )
    out["tags"] = bill["tags"]
    out["cud"] = 0.0
    name = bill["line_item_resource_id"].fillna("").str.extract(r":cluster/([^/]+)$")[0]
    out["cluster_name"] = name.where(out["kind"] == "control_plane")
    return _finish(out)


# --------------------------------------------------------------------------- Google Cloud


def gcp_lines(files: list[LandingFile]) -> pd.DataFrame:
    rows = []
    for file in files:
        delivery = _delivery_key(file)
        if file.container == "parquet":
            records = pq.read_table(file.path).to_pylist()
            if records and "service" not in records[0]:  # flattened `service_description`
                records = [_gcp_from_flat(record) for record in records]
        else:
            records = read_json_records(file)
        for record in records:
            rows.append(_gcp_row(record, delivery))
    if not rows:
        return _empty()
    frame = pd.DataFrame(rows)
    frame["start"] = to_utc(frame["start"])
    frame["end"] = to_utc(frame["end"])
    frame["charge_date"] = frame["start"].dt.date
    return frame.reindex(columns=LINE_COLUMNS)


def _gcp_from_flat(record: dict) -> dict:
    """A Parquet row (flattened `a_b` columns, JSON text for arrays) in the JSON shape."""

    def load(value):
        if isinstance(value, str) and value[:1] in "[{":
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value

    get = record.get
    return {
        "billing_account_id": get("billing_account_id"),
        "service": {"description": get("service_description")},
        "sku": {"description": get("sku_description")},
        "usage_start_time": get("usage_start_time"),
        "usage_end_time": get("usage_end_time"),
        "project": {"id": get("project_id")},
        "labels": load(get("labels")) or [],
        "system_labels": load(get("system_labels")) or [],
        "location": {"region": get("location_region")},
        "resource": {"name": get("resource_name"), "global_name": get("resource_global_name")},
        "cost": get("cost"),
        "credits": load(get("credits")) or [],
        "invoice": {"month": get("invoice_month")},
        "cost_type": get("cost_type"),
    }


def _gcp_row(record: dict, delivery: str) -> dict:
    service = (record.get("service") or {}).get("description") or ""
    sku = (record.get("sku") or {}).get("description") or ""
    resource = record.get("resource") or {}
    name = resource.get("name") or ""
    credits = record.get("credits") or []
    if isinstance(credits, dict):
        credits = [credits]
    credit_sum = sum(float(credit.get("amount") or 0) for credit in credits)
    cud = sum(
        float(credit.get("amount") or 0)
        for credit in credits
        if credit.get("type") == "COMMITTED_USAGE_DISCOUNT"
    )
    cost = float(record.get("cost") or 0) + credit_sum
    cost_type = (record.get("cost_type") or "regular").lower()
    lower_sku = sku.lower()
    if cost_type != "regular":
        kind = "account_level"
    elif service == "Compute Engine" and sku.startswith("Commitment"):
        kind = "commitment_fee"
    elif (
        "/instances/" in name
        and service == "Compute Engine"
        and ("data transfer" in lower_sku or "egress" in lower_sku)
    ):
        kind = "data_transfer"
    elif "/instances/" in name and service == "Compute Engine":
        kind = "instance"
    elif "/disks/" in name:
        kind = "volume"
    elif "forwardingrules/" in name.lower() or "load balanc" in lower_sku:
        kind = "load_balancer"
    elif "data transfer" in lower_sku or "egress" in lower_sku:
        kind = "other"
    else:
        kind = "other"
    labels = {
        normalize_tag_key(str(item.get("key"))): str(item.get("value") or "")
        for item in (record.get("labels") or [])
        if isinstance(item, dict)
    }
    system = {
        item.get("key"): item.get("value")
        for item in (record.get("system_labels") or [])
        if isinstance(item, dict)
    }
    if "spot" in lower_sku or "preemptible" in lower_sku:
        option = "spot"
    elif cud:
        option = "committed"
    else:
        option = "on_demand"
    instance = name.rsplit("/", 1)[-1] if kind in ("instance", "data_transfer") else None
    return {
        "fmt": "gcp",
        "provider": "gcp",
        "account": record.get("billing_account_id"),
        "sub_account": (record.get("project") or {}).get("id"),
        "period": str((record.get("invoice") or {}).get("month") or ""),
        "delivery": delivery,
        "resource_id": name or None,
        "rkey": (instance or name).lower(),
        "start": record.get("usage_start_time"),
        "end": record.get("usage_end_time"),
        "is_usage": cost_type == "regular" and kind != "commitment_fee",
        "kind": kind,
        "cost": cost,
        "hours": np.nan,
        "instance_type": system.get("compute.googleapis.com/machine_spec"),
        "region": (record.get("location") or {}).get("region"),
        "purchase_option": option,
        "tags": labels,
        "cud": cud,
        "cluster_name": None,
    }


# --------------------------------------------------------------------------- Azure

AZURE_COLUMNS = [
    "BillingAccountId",
    "SubscriptionId",
    "BillingPeriodStartDate",
    "Date",
    "ResourceId",
    "InstanceId",
    "MeterCategory",
    "Quantity",
    "UnitOfMeasure",
    "CostInBillingCurrency",
    "Cost",
    "PricingModel",
    "ChargeType",
    "AdditionalInfo",
    "Tags",
    "ResourceLocation",
]


def _hours_per_unit(unit: str) -> float:
    match = re.match(r"^\s*(\d+)?\s*hours?\s*$", unit or "", re.IGNORECASE)
    if not match:
        return np.nan
    return float(match.group(1) or 1)


def azure_lines(files: list[LandingFile]) -> pd.DataFrame:
    frames = []
    for file in files:
        frame = read_table(file, AZURE_COLUMNS)
        frame["delivery"] = _delivery_key(file)
        cost_column = "CostInBillingCurrency" if "costinbillingcurrency" in file.lower else "Cost"
        frame["_cost"] = _num(frame[cost_column])
        frames.append(frame)
    if not frames:
        return _empty()
    bill = pd.concat(frames, ignore_index=True)
    out = pd.DataFrame(index=bill.index)
    out["fmt"] = "azure"
    out["provider"] = "azure"
    account = bill["BillingAccountId"].where(
        bill["BillingAccountId"].notna(), bill["SubscriptionId"]
    )
    out["account"] = account
    out["sub_account"] = bill["SubscriptionId"]
    out["start"] = to_utc(bill["Date"])
    out["end"] = out["start"] + pd.Timedelta(days=1)
    period = to_utc(bill["BillingPeriodStartDate"].fillna(bill["Date"]))
    out["period"] = period.dt.strftime("%Y-%m-%d").where(
        bill["BillingPeriodStartDate"].notna(), out["start"].dt.strftime("%Y-%m-01")
    )
    out["delivery"] = bill["delivery"]
    resource = bill["ResourceId"].where(bill["ResourceId"].notna(), bill["InstanceId"])
    out["resource_id"] = resource
    lower = resource.fillna("").str.lower()
    out["rkey"] = lower.str.replace(r"/virtualmachines/[^/]+$", "", regex=True)
    category = bill["MeterCategory"].fillna("")
    charge_type = bill["ChargeType"].fillna("Usage")
    out["cost"] = bill["_cost"].fillna(0.0)
    usage = charge_type.eq("Usage")
    out["is_usage"] = usage
    vm = lower.str.contains("/virtualmachinescalesets/|/virtualmachines/")
    out["kind"] = np.select(
        [
            ~usage,
            category.eq("Bandwidth") & vm,
            category.eq("Bandwidth"),
            vm & category.eq("Virtual Machines"),
            lower.str.contains("/microsoft.compute/disks/"),
            lower.str.contains("/microsoft.network/loadbalancers/"),
        ],
        ["account_level", "data_transfer", "other", "instance", "volume", "load_balancer"],
        default="other",
    )
    per_unit = bill["UnitOfMeasure"].fillna("").map(_hours_per_unit)
    out["hours"] = (_num(bill["Quantity"]) * per_unit).where(out["kind"] == "instance")
    out["instance_type"] = bill["AdditionalInfo"].map(
        lambda text: _json_object(text).get("ServiceType")
    )
    out["region"] = bill["ResourceLocation"]
    model = bill["PricingModel"].fillna("").str.lower()
    out["purchase_option"] = np.select(
        [model.eq("spot"), model.eq("reservation"), model.eq("savingsplan")],
        ["spot", "reserved", "savings_plan"],
        default="on_demand",
    )
    out["tags"] = bill["Tags"].map(_tags_from_json)
    out["cud"] = 0.0
    out["cluster_name"] = None
    return _finish(out)


def _json_object(text) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --------------------------------------------------------------------------- FOCUS

FOCUS_COLUMNS = [
    "BillingAccountId",
    "SubAccountId",
    "BillingPeriodStart",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "EffectiveCost",
    "ResourceId",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "PricingCategory",
    "CommitmentDiscountType",
    "Tags",
    "RegionId",
    "SkuPriceDetails",
    "ProviderName",
    "ConsumedQuantity",
    "ConsumedUnit",
]


def focus_lines(files: list[LandingFile]) -> pd.DataFrame:
    frames = []
    for file in files:
        frame = read_table(file, FOCUS_COLUMNS)
        frame["delivery"] = _delivery_key(file)
        frames.append(frame)
    if not frames:
        return _empty()
    bill = pd.concat(frames, ignore_index=True)
    out = pd.DataFrame(index=bill.index)
    out["fmt"] = "focus"
    out["provider"] = "focus"
    out["account"] = bill["BillingAccountId"]
    out["sub_account"] = bill["SubAccountId"]
    out["start"] = to_utc(bill["ChargePeriodStart"])
    out["end"] = to_utc(bill["ChargePeriodEnd"])
    period = bill["BillingPeriodStart"].fillna("").str[:10]
    out["period"] = period.where(period != "", out["start"].dt.strftime("%Y-%m-01"))
    out["delivery"] = bill["delivery"]
    out["resource_id"] = bill["ResourceId"]
    out["rkey"] = bill["ResourceId"].fillna("").str.lower()
    category = bill["ChargeCategory"].fillna("").str.lower()
    out["cost"] = _num(bill["EffectiveCost"]).fillna(0.0)
    usage = category.eq("usage")
    out["is_usage"] = usage
    rtype = bill["ResourceType"].fillna("").str.lower()
    service = bill["ServiceCategory"].fillna("").str.lower()
    sname = bill["ServiceName"].fillna("").str.lower()
    out["kind"] = np.select(
        [
            ~usage,
            out["rkey"].eq(""),
            rtype.str.contains("load balancer|loadbalancer") | sname.str.contains("load balanc"),
            rtype.str.contains("disk|volume") | service.eq("storage"),
            service.eq("compute")
            & (rtype.str.contains("instance|virtual machine|vm") | rtype.eq("")),
        ],
        ["account_level", "other", "load_balancer", "volume", "instance"],
        default="other",
    )
    out["hours"] = _num(bill["ConsumedQuantity"]).where(
        bill["ConsumedUnit"].fillna("").str.lower().str.startswith("hour")
    )
    out["instance_type"] = None
    out["region"] = bill["RegionId"]
    pricing = bill["PricingCategory"].fillna("").str.lower()
    commitment = bill["CommitmentDiscountType"].fillna("").str.lower()
    out["purchase_option"] = np.select(
        [
            pricing.eq("dynamic") | pricing.str.contains("spot"),
            commitment.str.contains("reserv"),
            commitment.str.contains("savings"),
            pricing.eq("committed"),
        ],
        ["spot", "reserved", "savings_plan", "committed"],
        default="on_demand",
    )
    out["tags"] = bill["Tags"].map(_tags_from_json)
    out["cud"] = 0.0
    out["cluster_name"] = None
    return _finish(out)


# --------------------------------------------------------------------------- all


def restate(lines: pd.DataFrame, rank: dict[str, tuple]) -> pd.DataFrame:
    """docs/landing-and-raw.md: a newer export of a billing period of an account replaces the
    earlier export's rows of that period. Newest = the delivery with the latest file time,
    then the greatest delivery path."""
    if lines.empty:
        return lines
    order = lines["delivery"].map(rank)
    lines = lines.assign(_order=order)
    newest = lines.groupby(["fmt", "account", "period"], dropna=False)["_order"].transform("max")
    return lines[lines["_order"] == newest].drop(columns="_order")


def billing_lines(files: dict[str, list[LandingFile]], *, explicit: bool = False) -> pd.DataFrame:
    parts = []
    aws = [(f, True) for f in files.get("aws_legacy", [])]
    aws += [(f, False) for f in files.get("aws_cur2", [])]
    parts.append(aws_lines(aws))
    parts.append(gcp_lines(files.get("gcp", [])))
    parts.append(azure_lines(files.get("azure", [])))
    parts.append(focus_lines(files.get("focus", [])))
    every = [
        f for fmt in ("aws_legacy", "aws_cur2", "gcp", "azure", "focus") for f in files.get(fmt, [])
    ]
    rank_time: dict[str, tuple] = {}
    for file in every:
        key = _delivery_key(file)
        previous = rank_time.get(key, (0.0, key))
        rank_time[key] = (max(previous[0], file.mtime), key)
    if explicit:
        # Explicit deliveries: a later load replaces the period; the files of one load (all
        # parts of a delivery, however many folders) are kept together (docs/landing-and-raw.md
        # "Replacement happens once per load call").
        rank_time = {_delivery_key(file): (file.load,) for file in every}
    parts = [part for part in parts if not part.empty]
    if not parts:
        return _empty()
    lines = pd.concat(parts, ignore_index=True)
    lines = restate(lines, rank_time)
    lines["charge_date"] = lines["start"].dt.date
    lines["cost"] = lines["cost"].astype(float)
    lines["cud"] = lines["cud"].astype(float)
    lines["hours"] = pd.to_numeric(lines["hours"], errors="coerce")
    return lines.reset_index(drop=True)
