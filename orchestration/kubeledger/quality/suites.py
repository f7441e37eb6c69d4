"""One expectation suite per raw table, described as data and turned into GX 1.x objects late.

Every suite checks what SPEC §1.5 and §13 ask of a landing table: its required columns are
present and filled, its typed columns read as numbers / timestamps, usage and capacity are not
negative, usage is not above capacity by more than `USAGE_TOLERANCE`, enum columns hold known
values, and each row's dates lie inside the period its file says it covers.

Range and comparison expectations run on typed columns the frame adds next to the raw text
(`<column>__value` a double, `<column>__at` a UTC timestamp; see frames.py), so a value that
does not read is reported once, by its `readable` expectation, and never as out of range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubeledger.load.sql import ident, parse_number_sql, parse_timestamp_sql
from kubeledger.quality.tables import RAW_TABLES_BY_NAME, RawTable

# Usage may exceed capacity by this factor before the row is invalid (sampling jitter: the
# operator's usage and capacity seconds come from different scrapes).
USAGE_TOLERANCE = 1.05

# Python's `\s` spelled out as the characters it matches (str patterns: Unicode whitespace), so
# that pandas runs the patterns with pyarrow's RE2 over the whole column instead of Python's
# `re` value by value (it falls back for `\s`, whose RE2 meaning is narrower): the same matches,
# a fraction of the time on millions of rows.
WHITESPACE = (
    "[\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000]"
)
NUMBER_REGEX = rf"^{WHITESPACE}*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?{WHITESPACE}*$"
TIMESTAMP_REGEX = (
    rf"^{WHITESPACE}*\d{{4}}-\d{{2}}-\d{{2}}([ T]\d{{2}}:\d{{2}}(:\d{{2}}(\.\d+)?)?)?"
    rf"{WHITESPACE}*(Z|[+-]\d{{2}}(:?\d{{2}})?)?"
    # a zone name may follow: Go's `+0000 UTC` / `+0200 CEST`, or an IANA name (staging reads both)
    rf"({WHITESPACE}*([A-Z]{{2,5}}|[A-Za-z_]+/[A-Za-z_/+-]+))?{WHITESPACE}*$"
    rf"|^{WHITESPACE}*\d{{1,2}}/\d{{1,2}}/\d{{4}}( \d{{1,2}}:\d{{2}}(:\d{{2}})?( ?[AaPp][Mm])?)?"
    rf"{WHITESPACE}*$"
)

NODE_ROLES = (
    "worker",
    "control-plane",
    "control_plane",
    "controlplane",
    "master",
    "infra",
    "infrastructure",
)
OWNED_KINDS = ("Pod", "ReplicaSet", "Job")
RATE_CARD_RESOURCES = ("node", "volume", "load_balancer")
RATE_CARD_SELECTORS = ("node", "label")
AWS_LINE_ITEM_TYPES = (
    "Usage",
    "DiscountedUsage",
    "SavingsPlanCoveredUsage",
    "SavingsPlanNegation",
    "SavingsPlanUpfrontFee",
    "SavingsPlanRecurringFee",
    "RIFee",
    "Fee",
    "Credit",
    "Refund",
    "Tax",
    "EdpDiscount",
    "PrivateRateDiscount",
    "BundledDiscount",
    "DistributorDiscount",
    "SppDiscount",
)
GCP_COST_TYPES = ("regular", "tax", "adjustment", "rounding_error")
AZURE_CHARGE_TYPES = (
    "usage",
    "purchase",
    "refund",
    "unusedreservation",
    "unusedsavingsplan",
    "roundingadjustment",
    "adjustment",
    "tax",
    "credit",
)
FOCUS_CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")


@dataclass(frozen=True)
class ExpectationSpec:
    """One expectation: the GX class name, its arguments, and what it says in plain words."""

    gx_type: str
    kwargs: dict[str, Any]
    column: str | None
    description: str

    def build(self, index: int) -> Any:
        """The GX expectation, tagged with its place in the suite (`meta.spec_index`)."""
        import great_expectations.expectations as gxe

        return getattr(gxe, self.gx_type)(
            **self.kwargs, description=self.description, meta={"spec_index": index}
        )


@dataclass(frozen=True)
class TableSuite:
    """The suite of one raw table and the typed columns its frame needs: each derived column's
    SQL (`derived`) and the one raw column it reads (`sources`)."""

    table: RawTable
    expectations: tuple[ExpectationSpec, ...]
    derived: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"raw_{self.table.name}"


class _Builder:
    """Collects a table's expectations and the derived frame columns they use."""

    def __init__(self, table_name: str) -> None:
        self.table = RAW_TABLES_BY_NAME[table_name]
        self.expectations: list[ExpectationSpec] = []
        self.derived: dict[str, str] = {}
        self.sources: dict[str, str] = {}

    def add(self, gx_type: str, subject: str | None, description: str, **kwargs: Any) -> None:
        self.expectations.append(ExpectationSpec(gx_type, kwargs, subject, description))

    def derive(self, name: str, column: str, sql: str) -> str:
        """A typed frame column: `sql`, which reads the raw `column` and nothing else."""
        self.derived[name] = sql
        self.sources[name] = column
        return name

    def number(self, column: str) -> str:
        return self.derive(f"{column}__value", column, parse_number_sql(ident(column)))

    def timestamp(self, column: str) -> str:
        return self.derive(
            f"{column}__at", column, f"timezone('UTC', {parse_timestamp_sql(ident(column))})"
        )

    # --- what every table gets from its loader format --------------------------------------

    def from_format(self, not_null: tuple[str, ...]) -> _Builder:
        spec = self.table.spec
        required = [group[0] for group in spec.required if len(group) == 1]
        self.add(
            "ExpectTableColumnsToMatchSet",
            None,
            f"{self.table.name} has its required columns: {', '.join(required)}",
            column_set=required,
            exact_match=False,
        )
        for column in not_null:
            self.add("ExpectColumnValuesToNotBeNull", column, f"{column} is filled", column=column)
        for column in spec.numbers:
            self.add(
                "ExpectColumnValuesToMatchRegex",
                column,
                f"{column} reads as a number",
                column=column,
                regex=NUMBER_REGEX,
            )
        for column in spec.timestamps:
            self.add(
                "ExpectColumnValuesToMatchRegex",
                column,
                f"{column} reads as a timestamp",
                column=column,
                regex=TIMESTAMP_REGEX,
            )
        return self

    # --- domain rules ----------------------------------------------------------------------

    def non_negative(self, *columns: str) -> _Builder:
        for column in columns:
            self.add(
                "ExpectColumnValuesToBeBetween",
                column,
                f"{column} is not negative",
                column=self.number(column),
                min_value=0,
            )
        return self

    def usage_within_capacity(self, usage: str, capacity: str) -> _Builder:
        tolerated = self.derive(
            f"{capacity}__tolerated",
            capacity,
            f"{parse_number_sql(ident(capacity))} * {USAGE_TOLERANCE}",
        )
        self.add(
            "ExpectColumnPairValuesAToBeGreaterThanB",
            usage,
            f"{usage} is at most {capacity} x {USAGE_TOLERANCE}",
            column_A=tolerated,
            column_B=self.number(usage),
            or_equal=True,
            ignore_row_if="either_value_is_missing",
        )
        return self

    def not_before(self, later: str, earlier: str, *, strictly: bool = False) -> _Builder:
        relation = "after" if strictly else "not before"
        self.add(
            "ExpectColumnPairValuesAToBeGreaterThanB",
            later,
            f"{later} is {relation} {earlier}",
            column_A=self.timestamp(later),
            column_B=self.timestamp(earlier),
            or_equal=not strictly,
            ignore_row_if="either_value_is_missing",
        )
        return self

    def one_of(self, column: str, values: tuple[str, ...], *, normalize: bool = False) -> _Builder:
        target = column
        if normalize:
            target = self.derive(
                f"{column}__normalized", column, f"nullif(lower(trim({ident(column)})), '')"
            )
        self.add(
            "ExpectColumnValuesToBeInSet",
            column,
            f"{column} is one of {', '.join(values)}",
            column=target,
            value_set=list(values),
        )
        return self

    def suite(self) -> TableSuite:
        return TableSuite(
            self.table, tuple(self.expectations), dict(self.derived), dict(self.sources)
        )


def _koku_period(builder: _Builder) -> _Builder:
    return (
        builder.not_before("interval_start", "report_period_start")
        .not_before("report_period_end", "interval_start", strictly=True)
        .not_before("interval_end", "interval_start")
    )


def _pod_usage() -> TableSuite:
    builder = _Builder("koku_pod_usage").from_format(
        ("interval_start", "interval_end", "node", "namespace", "pod")
    )
    builder.non_negative(
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
    )
    builder.usage_within_capacity("pod_usage_cpu_core_seconds", "node_capacity_cpu_core_seconds")
    builder.usage_within_capacity(
        "pod_usage_memory_byte_seconds", "node_capacity_memory_byte_seconds"
    )
    builder.one_of("node_role", NODE_ROLES, normalize=True)
    return _koku_period(builder).suite()


def _storage_usage() -> TableSuite:
    builder = _Builder("koku_storage_usage").from_format(
        ("interval_start", "interval_end", "namespace", "persistentvolumeclaim", "persistentvolume")
    )
    builder.non_negative(
        "persistentvolumeclaim_capacity_bytes",
        "persistentvolumeclaim_capacity_byte_seconds",
        "volume_request_storage_byte_seconds",
        "persistentvolumeclaim_usage_byte_seconds",
    )
    builder.usage_within_capacity(
        "persistentvolumeclaim_usage_byte_seconds", "persistentvolumeclaim_capacity_byte_seconds"
    )
    return _koku_period(builder).suite()


def _node_labels() -> TableSuite:
    builder = _Builder("koku_node_labels").from_format(("interval_start", "node"))
    return _koku_period(builder).suite()


def _namespace_labels() -> TableSuite:
    builder = _Builder("koku_namespace_labels").from_format(("interval_start", "namespace"))
    return _koku_period(builder).suite()


def _gpu_usage() -> TableSuite:
    builder = _Builder("koku_gpu_usage").from_format(
        ("interval_start", "node", "namespace", "pod", "gpu_uuid")
    )
    builder.non_negative("gpu_memory_capacity_mib", "gpu_pod_uptime", "gpu_max_slices")
    return _koku_period(builder).suite()


def _nodes() -> TableSuite:
    # provider_id is not required: rate-card (on-prem) clusters have no cloud provider ID
    builder = _Builder("cluster_nodes").from_format(("cluster_id", "node"))
    return builder.not_before("last_seen", "first_seen").suite()


def _owners() -> TableSuite:
    builder = _Builder("cluster_owners").from_format(
        ("cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name")
    )
    return builder.one_of("kind", OWNED_KINDS).suite()


def _lb_services() -> TableSuite:
    return (
        _Builder("cluster_lb_services")
        .from_format(("cluster_id", "namespace", "service", "load_balancer_id"))
        .suite()
    )


def _rate_card() -> TableSuite:
    builder = _Builder("rate_card").from_format(
        ("cluster_id", "resource", "selector_type", "selector", "price")
    )
    builder.non_negative("price")
    builder.one_of("resource", RATE_CARD_RESOURCES, normalize=True)
    builder.one_of("selector_type", RATE_CARD_SELECTORS, normalize=True)
    return builder.suite()


def _aws(table_name: str, names: dict[str, str]) -> TableSuite:
    builder = _Builder(table_name).from_format(
        (names["payer"], names["type"], names["start"], names["end"])
    )
    builder.one_of(names["type"], AWS_LINE_ITEM_TYPES)
    builder.not_before(names["start"], names["period_start"])
    builder.not_before(names["period_end"], names["start"], strictly=True)
    builder.not_before(names["end"], names["start"])
    return builder.suite()


def _aws_legacy() -> TableSuite:
    return _aws(
        "aws_cur_legacy",
        {
            "payer": "bill/PayerAccountId",
            "type": "lineItem/LineItemType",
            "start": "lineItem/UsageStartDate",
            "end": "lineItem/UsageEndDate",
            "period_start": "bill/BillingPeriodStartDate",
            "period_end": "bill/BillingPeriodEndDate",
        },
    )


def _aws_cur2() -> TableSuite:
    return _aws(
        "aws_cur2",
        {
            "payer": "bill_payer_account_id",
            "type": "line_item_line_item_type",
            "start": "line_item_usage_start_date",
            "end": "line_item_usage_end_date",
            "period_start": "bill_billing_period_start_date",
            "period_end": "bill_billing_period_end_date",
        },
    )


def _gcp() -> TableSuite:
    builder = _Builder("gcp_billing_export").from_format(
        ("billing_account_id", "usage_start_time", "usage_end_time", "cost", "currency")
    )
    builder.one_of("cost_type", GCP_COST_TYPES, normalize=True)
    builder.not_before("usage_end_time", "usage_start_time")
    return builder.suite()


def _azure() -> TableSuite:
    builder = _Builder("azure_cost_details").from_format(("Date", "SubscriptionId"))
    builder.one_of("ChargeType", AZURE_CHARGE_TYPES, normalize=True)
    builder.not_before("Date", "BillingPeriodStartDate")
    builder.not_before("BillingPeriodEndDate", "Date")
    return builder.suite()


def _focus() -> TableSuite:
    builder = _Builder("focus_billing").from_format(
        ("BillingAccountId", "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory")
    )
    builder.one_of("ChargeCategory", FOCUS_CHARGE_CATEGORIES)
    builder.not_before("ChargePeriodStart", "BillingPeriodStart")
    builder.not_before("BillingPeriodEnd", "ChargePeriodStart", strictly=True)
    builder.not_before("ChargePeriodEnd", "ChargePeriodStart")
    return builder.suite()


SUITES: tuple[TableSuite, ...] = (
    _pod_usage(),
    _storage_usage(),
    _node_labels(),
    _namespace_labels(),
    _gpu_usage(),
    _nodes(),
    _owners(),
    _lb_services(),
    _rate_card(),
    _aws_legacy(),
    _aws_cur2(),
    _gcp(),
    _azure(),
    _focus(),
)

SUITES_BY_TABLE: dict[str, TableSuite] = {suite.table.name: suite for suite in SUITES}
