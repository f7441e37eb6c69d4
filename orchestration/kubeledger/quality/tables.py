"""The raw tables the suites check: which column gives a row's UTC day and its cluster.

A usage row's day is its `interval_start`; a billing row's day is the start of its charge
period. Supplementary tables (nodes, owners, load balancers, rate card) have no day: they are
checked whole on every run.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeledger.load import FORMATS_BY_NAME, FormatSpec
from kubeledger.load.sql import ident, parse_timestamp_sql


@dataclass(frozen=True)
class RawTable:
    """One raw table: its loader format, the column of its day and the column of its cluster."""

    spec: FormatSpec
    day_column: str | None
    cluster_column: str | None

    @property
    def name(self) -> str:
        return self.spec.raw_table

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def qualified(self) -> str:
        return f"raw.{ident(self.name)}"

    def day_sql(self) -> str:
        """The row's UTC day as a DATE (NULL when the table has no day or it is unreadable)."""
        if self.day_column is None:
            return "cast(null as date)"
        return f"cast(timezone('UTC', {parse_timestamp_sql(ident(self.day_column))}) as date)"

    def cluster_sql(self) -> str:
        if self.cluster_column is None:
            return "cast(null as varchar)"
        return ident(self.cluster_column)


def _table(name: str, day_column: str | None, cluster_column: str | None) -> RawTable:
    return RawTable(FORMATS_BY_NAME[name], day_column, cluster_column)


RAW_TABLES: tuple[RawTable, ...] = (
    _table("koku_pod_usage", "interval_start", "_cluster_id"),
    _table("koku_storage_usage", "interval_start", "_cluster_id"),
    _table("koku_node_labels", "interval_start", "_cluster_id"),
    _table("koku_namespace_labels", "interval_start", "_cluster_id"),
    _table("koku_gpu_usage", "interval_start", "_cluster_id"),
    _table("cluster_nodes", None, "cluster_id"),
    _table("cluster_owners", None, "cluster_id"),
    _table("cluster_lb_services", None, "cluster_id"),
    _table("rate_card", None, "cluster_id"),
    _table("aws_cur_legacy", "lineItem/UsageStartDate", None),
    _table("aws_cur2", "line_item_usage_start_date", None),
    _table("gcp_billing_export", "usage_start_time", None),
    _table("azure_cost_details", "Date", None),
    _table("focus_billing", "ChargePeriodStart", None),
)

RAW_TABLES_BY_NAME: dict[str, RawTable] = {table.name: table for table in RAW_TABLES}
BILLING_TABLES: tuple[RawTable, ...] = tuple(t for t in RAW_TABLES if t.kind == "billing")
USAGE_TABLES: tuple[RawTable, ...] = tuple(t for t in RAW_TABLES if t.kind == "usage")
