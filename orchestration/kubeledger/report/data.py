"""What the report shows: one month of the marts, read into plain Python and pandas.

The bill section needs only `marts.fct_bill_lines_monthly` (sealed lines for a sealed month,
the draft otherwise). Every other section reads its own mart and, when that mart is missing
from the warehouse or cannot be read, records why in `ReportData.missing` instead of failing:
the HTML then says "not available" for that section.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import duckdb
import pandas as pd

from kubeledger.bill_backing import BillBacking, load_bill_backing
from kubeledger.months import month_start

CENT = Decimal("0.01")
ZERO = Decimal("0")


class ReportError(RuntimeError):
    """The report cannot be built (bad month, or the bill mart itself is missing)."""


def parse_month(month: str) -> tuple[dt.date, dt.date]:
    """First and last UTC day of a `YYYY-MM` month."""
    try:
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise ReportError(f"--month must be YYYY-MM, got {month!r}") from exc
    if len(month) != 7:
        raise ReportError(f"--month must be YYYY-MM, got {month!r}")
    following = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return first, following - dt.timedelta(days=1)


@dataclass
class BillSummary:
    """The org bill of the month: the sum of its lines, and where it stands."""

    state: str  # sealed | draft | empty
    currency: str
    total: Decimal
    corrected_total: Decimal
    estimated_total: Decimal
    invoice_total: Decimal | None
    status: str  # full | partial | none
    line_count: int
    cluster_count: int
    bill_id: str | None = None
    sealed_at: dt.datetime | None = None
    as_of_date: dt.date | None = None
    blended_factor: Decimal | None = None
    estimated_clusters: list[str] = field(default_factory=list)


@dataclass
class ReportData:
    month: str
    first_day: dt.date
    last_day: dt.date
    bill: BillSummary
    bill_lines: pd.DataFrame
    bridge: pd.DataFrame
    bridge_source: str
    close_status: pd.DataFrame | None = None
    headline: dict[str, Any] = field(default_factory=dict)
    team_daily: pd.DataFrame | None = None
    team_month: pd.DataFrame | None = None
    cluster_split: pd.DataFrame | None = None
    efficiency_teams: pd.DataFrame | None = None
    efficiency_clusters: pd.DataFrame | None = None
    unallocated: pd.DataFrame | None = None
    unallocated_summary: dict[str, Any] = field(default_factory=dict)
    health_daily: pd.DataFrame | None = None
    health_summary: pd.DataFrame | None = None
    health_source: str | None = None
    budgets: pd.DataFrame | None = None
    missing: dict[str, str] = field(default_factory=dict)
    # how the bill is backed: invoice / rate card / estimate (kubeledger/bill_backing.py)
    backing: BillBacking | None = None


def relation_exists(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    row = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return bool(row and row[0])


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    """Rows as dicts, decimals kept as `Decimal` (pandas would turn them into floats)."""
    cursor = con.execute(sql, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> pd.DataFrame:
    return con.execute(sql, params).df()


def _dec(value: Any) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value or 0))


# --- the bill -----------------------------------------------------------------------------


LINE_COLUMNS = [
    "bill_state",
    "bill_id",
    "cluster_id",
    "cost_family",
    "line_key",
    "line_id",
    "is_unassigned",
    "estimated_cost",
    "billed_cost",
    "correction_delta_cost",
    "corrected_billed_cost",
    "target_cost",
    "factor",
    "is_reconciled",
    "basis",
    "close_status",
    "is_carry_cent",
]

SEALED_LINES_SQL = """
with corrections as (
    select bill_id, line_id, min(cluster_id) as cluster_id, min(cost_family) as cost_family,
           min(line_key) as line_key, sum(delta_cost) as delta_cost
    from {corrections}
    where bill_month = ?
    group by bill_id, line_id
),
lines as (
    select
        coalesce(sealed_lines.bill_id, corrections.bill_id) as bill_id,
        coalesce(sealed_lines.cluster_id, corrections.cluster_id) as cluster_id,
        coalesce(sealed_lines.cost_family, corrections.cost_family) as cost_family,
        coalesce(sealed_lines.line_key, corrections.line_key) as line_key,
        coalesce(sealed_lines.line_id, corrections.line_id) as line_id,
        coalesce(sealed_lines.is_unassigned, corrections.line_key = '__unassigned__')
            as is_unassigned,
        coalesce(sealed_lines.estimated_cost, 0) as estimated_cost,
        coalesce(sealed_lines.billed_cost, 0) as billed_cost,
        coalesce(corrections.delta_cost, 0) as correction_delta_cost,
        coalesce(sealed_lines.is_carry_cent, false) as is_carry_cent
    from (select * from sealed.sealed_bill_lines where bill_month = ?) as sealed_lines
    full outer join corrections
        on sealed_lines.bill_id = corrections.bill_id
        and sealed_lines.line_id = corrections.line_id
)
select
    'sealed' as bill_state, lines.bill_id, lines.cluster_id, lines.cost_family, lines.line_key,
    lines.line_id, lines.is_unassigned, lines.estimated_cost, lines.billed_cost,
    cast(lines.correction_delta_cost as decimal(38, 3)) as correction_delta_cost,
    cast(lines.billed_cost + lines.correction_delta_cost as decimal(38, 3))
        as corrected_billed_cost,
    slices.target_cost, slices.factor, slices.is_reconciled, slices.basis,
    slices.close_status, lines.is_carry_cent
from lines
left join sealed.sealed_bill_clusters as slices
    on slices.bill_month = ?
    and lines.cluster_id = slices.cluster_id
    and lines.cost_family = slices.cost_family
order by lines.cluster_id, lines.cost_family, lines.line_id
"""

# Before the first correction table exists: no corrections.
NO_CORRECTIONS = """(
    select null::varchar as bill_id, null::varchar as line_id, null::varchar as bill_month,
           null::varchar as cluster_id, null::varchar as cost_family, null::varchar as line_key,
           0::decimal(38, 3) as delta_cost
    where false
) as no_corrections"""


def is_sealed(con: duckdb.DuckDBPyConnection, month: str) -> bool:
    """Whether the sealed store holds a bill for `month`."""
    if not all(
        relation_exists(con, "sealed", t)
        for t in ("sealed_bills", "sealed_bill_lines", "sealed_bill_clusters")
    ):
        return False
    row = con.execute(
        "select count(*) from sealed.sealed_bills where bill_month = ?", [month]
    ).fetchone()
    return bool(row and row[0])


def _bill_lines(con: duckdb.DuckDBPyConnection, month: str) -> pd.DataFrame:
    """The sealed lines (with their corrections) of a sealed month, else the draft."""
    if is_sealed(con, month):
        corrections = (
            "sealed.correction_bill_lines"
            if relation_exists(con, "sealed", "correction_bill_lines")
            else NO_CORRECTIONS
        )
        rows = _rows(con, SEALED_LINES_SQL.format(corrections=corrections), [month, month, month])
        return pd.DataFrame(rows, columns=LINE_COLUMNS)
    if not relation_exists(con, "marts", "fct_bill_lines_monthly"):
        raise ReportError(
            "marts.fct_bill_lines_monthly is not in the warehouse: run `kubeledger build` first"
        )
    rows = _rows(
        con,
        f"""
        select {", ".join(LINE_COLUMNS)}
        from marts.fct_bill_lines_monthly
        where bill_month = ?
        order by cluster_id, cost_family, line_id
        """,
        [month_start(month)],
    )
    return pd.DataFrame(rows, columns=LINE_COLUMNS)


def _currency(con: duckdb.DuckDBPyConnection, month: str) -> str:
    for schema, table, sql, params in (
        (
            "marts",
            "fct_bill_close_status",
            "select min(currency) from marts.fct_bill_close_status where bill_month = ?",
            [month_start(month)],
        ),
        ("config", "settings", "select min(currency) from config.settings", []),
    ):
        if relation_exists(con, schema, table):
            try:
                row = con.execute(sql, params).fetchone()
            except duckdb.Error:
                continue
            if row and row[0]:
                return str(row[0])
    return "USD"


def _sealed_bill(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, Any] | None:
    if not relation_exists(con, "sealed", "sealed_bills"):
        return None
    rows = _rows(
        con,
        """
        select bill_id, bill_status, sealed_at, as_of_date, blended_factor, invoice_cost,
               estimated_clusters, currency
        from sealed.sealed_bills where bill_month = ?
        """,
        [month],
    )
    return rows[0] if rows else None


def _bill_status(slices: pd.DataFrame) -> str:
    """SPEC §9: full when every cluster slice is reconciled, partial when some, none."""
    if slices.empty:
        return "none"
    reconciled = slices["is_reconciled"].fillna(False).astype(bool)
    if reconciled.all():
        return "full"
    return "partial" if reconciled.any() else "none"


def _bridge(
    con: duckdb.DuckDBPyConnection, month: str, lines: pd.DataFrame, sealed: bool
) -> tuple[pd.DataFrame, str, pd.DataFrame | None]:
    """Per cluster and family: estimate → factor → billed, and the close status rows.

    A sealed month reads the slices as sealed: from fct_bill_close_status when it already
    shows the seal (it then also says whether a correction is pending), else straight from
    sealed.sealed_bill_clusters. An open month reads fct_bill_close_status's draft.
    """
    columns = [
        "bill_state",
        "cluster_id",
        "cost_family",
        "estimated_cost",
        "invoice_cost",
        "target_cost",
        "billed_cost",
        "factor",
        "basis",
        "is_reconciled",
        "close_status",
        "reason",
        "link_state",
        "days_due",
        "days_missing",
        "missing_dates",
        "deadline_date",
        "closable_from_date",
        "has_factor_drift",
        "has_pending_correction",
        "anomaly",
    ]
    wanted_state = "sealed" if sealed else "draft"
    # a mart names the month by its first day, the sealed store by its `YYYY-MM` text
    candidates = [("marts", "fct_bill_close_status", columns, month_start(month))]
    if sealed:
        candidates.append(
            (
                "sealed",
                "sealed_bill_clusters",
                [
                    "'sealed' as bill_state" if c == "bill_state" else c
                    for c in columns
                    if c != "has_pending_correction"
                ],
                month,
            )
        )
    for schema, table, wanted, month_key in candidates:
        if not relation_exists(con, schema, table):
            continue
        try:
            rows = _rows(
                con,
                f"select {', '.join(wanted)} from {schema}.{table} where bill_month = ? "
                "order by cluster_id, cost_family",
                [month_key],
            )
        except duckdb.Error:
            continue
        rows = [row for row in rows if row["bill_state"] == wanted_state]
        if rows:
            frame = pd.DataFrame(rows)
            return frame, f"{schema}.{table}", frame
    # Neither the close status nor a seal: the bridge from the lines themselves.
    if lines.empty:
        return pd.DataFrame(columns=columns), "marts.fct_bill_lines_monthly", None
    grouped = []
    for (cluster, family), group in lines.groupby(["cluster_id", "cost_family"], sort=True):
        grouped.append(
            {
                "cluster_id": cluster,
                "cost_family": family,
                "estimated_cost": sum((_dec(v) for v in group["estimated_cost"]), ZERO),
                "invoice_cost": None,
                "target_cost": _dec(group["target_cost"].iloc[0]),
                "billed_cost": sum((_dec(v) for v in group["billed_cost"]), ZERO),
                "factor": group["factor"].iloc[0],
                "basis": group["basis"].iloc[0],
                "is_reconciled": bool(group["is_reconciled"].iloc[0]),
                "close_status": group["close_status"].iloc[0],
            }
        )
    return pd.DataFrame(grouped), "marts.fct_bill_lines_monthly", None


def _bill_summary(
    con: duckdb.DuckDBPyConnection, month: str, lines: pd.DataFrame, bridge: pd.DataFrame
) -> BillSummary:
    currency = _currency(con, month)
    total = sum((_dec(v) for v in lines["billed_cost"]), ZERO).quantize(CENT)
    corrected = sum((_dec(v) for v in lines["corrected_billed_cost"]), ZERO).quantize(CENT)
    estimated = sum((_dec(v) for v in lines["estimated_cost"]), ZERO)
    invoices = [
        _dec(v)
        for v in bridge.get("invoice_cost", pd.Series(dtype=object))
        if v is not None and not (isinstance(v, float) and pd.isna(v))
    ]
    states = set(lines["bill_state"]) if not lines.empty else set()
    state = "sealed" if "sealed" in states else ("draft" if states else "empty")
    summary = BillSummary(
        state=state,
        currency=currency,
        total=total,
        corrected_total=corrected,
        estimated_total=estimated,
        invoice_total=sum(invoices, ZERO) if invoices else None,
        status=_bill_status(bridge) if not bridge.empty else "none",
        line_count=len(lines),
        cluster_count=lines["cluster_id"].nunique() if not lines.empty else 0,
    )
    if not bridge.empty and "is_reconciled" in bridge:
        summary.estimated_clusters = sorted(
            set(bridge.loc[~bridge["is_reconciled"].fillna(False).astype(bool), "cluster_id"])
        )
    if estimated:
        summary.blended_factor = (total / estimated).quantize(Decimal("0.000001"))
    sealed = _sealed_bill(con, month) if state == "sealed" else None
    if sealed:
        summary.bill_id = sealed["bill_id"]
        summary.status = sealed["bill_status"]
        summary.sealed_at = sealed["sealed_at"]
        summary.as_of_date = sealed["as_of_date"]
        summary.blended_factor = sealed["blended_factor"]
        summary.currency = sealed["currency"] or currency
        summary.estimated_clusters = [
            c for c in (sealed["estimated_clusters"] or "").split(",") if c.strip()
        ]
        if sealed["invoice_cost"] is not None:
            summary.invoice_total = sealed["invoice_cost"]
    elif state == "sealed":
        summary.bill_id = (
            str(lines["bill_id"].dropna().iloc[0]) if lines["bill_id"].notna().any() else None
        )
    return summary


# --- the ledger sections -----------------------------------------------------------------


def _headline(con: duckdb.DuckDBPyConnection, args: list[Any]) -> dict[str, Any]:
    row = _rows(
        con,
        """
        select
            count(distinct cluster_id) as clusters,
            sum(cost_in_scope) as cost_in_scope,
            sum(direct_cost) as direct_cost,
            sum(shared_cost) as shared_cost,
            sum(idle_cost) as idle_cost,
            sum(unallocated_cost) as unallocated_cost,
            sum(owned_cost) as owned_cost,
            sum(reconciled_cost) as reconciled_cost,
            count(*) filter (where is_complete) as complete_days,
            count(*) as cluster_days
        from marts.fct_reconciliation_daily
        where usage_date between ? and ?
        """,
        args,
    )[0]
    scope = row["cost_in_scope"] or 0.0

    def share(value: float | None) -> float | None:
        return (value or 0.0) / scope if scope else None

    row["idle_ratio"] = share(row["idle_cost"])
    row["platform_ratio"] = share(row["shared_cost"])
    row["ownership_coverage_ratio"] = share(row["owned_cost"])
    row["reconciled_ratio"] = share(row["reconciled_cost"])
    return row


def _team_costs(
    con: duckdb.DuckDBPyConnection, args: list[Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    daily = _frame(
        con,
        """
        select usage_date, coalesce(team, 'unallocated') as team, sum(total_cost) as total_cost
        from marts.fct_owner_costs_daily
        where usage_date between ? and ?
        group by all
        order by usage_date, team
        """,
        args,
    )
    month = _frame(
        con,
        """
        select
            coalesce(team, 'unallocated') as team,
            sum(direct_cost) as direct_cost,
            sum(platform_share_cost) as platform_share_cost,
            sum(workload_idle_cost + infrastructure_idle_share_cost + workload_idle_share_cost)
                as idle_cost,
            sum(unattributed_storage_share_cost + unattributed_network_share_cost)
                as unattributed_cost,
            sum(unallocated_cost) as unallocated_cost,
            sum(total_cost) as total_cost,
            count(distinct cluster_id) as clusters
        from marts.fct_owner_costs_daily
        where usage_date between ? and ?
        group by all
        order by total_cost desc, team
        """,
        args,
    )
    return daily, month


def _cluster_split(con: duckdb.DuckDBPyConnection, args: list[Any]) -> pd.DataFrame:
    return _frame(
        con,
        """
        select
            cluster_id,
            sum(direct_cost) as direct_cost,
            sum(workload_idle_cost) as workload_idle_cost,
            sum(platform_cost) as platform_cost,
            sum(infrastructure_idle_cost) as infrastructure_idle_cost,
            sum(unattributed_storage_cost + unattributed_network_cost) as unattributed_cost,
            sum(unallocated_cost) as unallocated_cost,
            sum(ledger_cost) as ledger_cost
        from marts.fct_cluster_costs_daily
        where usage_date between ? and ?
        group by cluster_id
        order by cluster_id
        """,
        args,
    )


def _efficiency(con: duckdb.DuckDBPyConnection, args: list[Any], level: str) -> pd.DataFrame:
    # total_efficiency × compute_cost is Σ(efficiency × cost) of the day, so the month's
    # cost-weighted efficiency (SPEC §12) is exact from the daily rows.
    key = "rollup_key as team" if level == "team" else "cluster_id"
    group = "rollup_key" if level == "team" else "cluster_id"
    return _frame(
        con,
        f"""
        select
            {key},
            sum(total_efficiency * compute_cost) / nullif(sum(compute_cost), 0)
                as total_efficiency,
            sum(compute_cost) as compute_cost,
            sum(waste_cost) as waste_cost
        from marts.fct_efficiency_daily
        where rollup_level = ? and usage_date between ? and ?
        group by {group}
        order by compute_cost desc, {group}
        """,
        [level, *args],
    )


def _unallocated(
    con: duckdb.DuckDBPyConnection, args: list[Any], top: int
) -> tuple[pd.DataFrame, dict[str, Any]]:
    frame = _frame(
        con,
        """
        select
            cluster_id, resource_id, resource_type, cost_family, unallocated_reason,
            sum(unallocated_cost) as unallocated_cost,
            count(distinct usage_date) as days,
            min(usage_date) as first_day,
            max(usage_date) as last_day
        from marts.fct_unallocated_resources_daily
        where usage_date between ? and ?
        group by all
        order by unallocated_cost desc, cluster_id, resource_id
        """,
        args,
    )
    summary = {
        "count": len(frame),
        "total": float(frame["unallocated_cost"].sum()) if len(frame) else 0.0,
        "shown": min(top, len(frame)),
    }
    return frame.head(top).reset_index(drop=True), summary


def _health(
    con: duckdb.DuckDBPyConnection, args: list[Any]
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    if relation_exists(con, "marts", "fct_data_health_daily"):
        try:
            daily = _frame(
                con,
                """
                select cluster_id, usage_date,
                       case when not coalesce(is_complete, false) then 'incomplete'
                            when needs_attention then 'needs attention'
                            else 'ok' end as day_state
                from marts.fct_data_health_daily
                where usage_date between ? and ?
                order by cluster_id, usage_date
                """,
                args,
            )
            summary = _frame(
                con,
                """
                select cluster_id,
                       count(*) as days,
                       count(*) filter (where is_complete) as complete_days,
                       count(*) filter (where needs_attention) as attention_days,
                       sum(node_days_on_estimate) as node_days_on_estimate,
                       sum(node_days_unpriced) as node_days_unpriced,
                       avg(match_ratio) as match_ratio,
                       sum(quarantined_rows) as quarantined_rows,
                       sum(failed_expectations) as failed_expectations
                from marts.fct_data_health_daily
                where usage_date between ? and ?
                group by cluster_id
                order by cluster_id
                """,
                args,
            )
            return daily, summary, "marts.fct_data_health_daily"
        except duckdb.Error:
            pass
    daily = _frame(
        con,
        """
        select cluster_id, usage_date,
               case when not coalesce(is_complete, false) then 'incomplete'
                    when not coalesce(is_match_rate_healthy, true) then 'needs attention'
                    else 'ok' end as day_state
        from marts.fct_reconciliation_daily
        where usage_date between ? and ?
        order by cluster_id, usage_date
        """,
        args,
    )
    summary = _frame(
        con,
        """
        select cluster_id,
               count(*) as days,
               count(*) filter (where is_complete) as complete_days,
               count(*) filter (where not coalesce(is_match_rate_healthy, true)) as attention_days,
               sum(reconciled_cost) / nullif(sum(cost_in_scope), 0) as reconciled_ratio,
               -- rate-card clusters have no match rate (null), not 0%
               sum(nodes_priced_from_bill) filter (where match_ratio is not null)
                   / nullif(sum(nodes_ran) filter (where match_ratio is not null), 0)
                   as match_ratio,
               count(*) filter (where not has_usage) as days_without_usage,
               count(*) filter (where not has_billing) as days_without_billing
        from marts.fct_reconciliation_daily
        where usage_date between ? and ?
        group by cluster_id
        order by cluster_id
        """,
        args,
    )
    return daily, summary, "marts.fct_reconciliation_daily"


def _budgets(con: duckdb.DuckDBPyConnection, args: list[Any]) -> pd.DataFrame:
    """Every budget (owners' and allocations') on its last status day of the month."""
    return _frame(
        con,
        """
        with latest as (
            select *, row_number() over (
                partition by budget_name order by status_date desc
            ) as recency
            from marts.fct_budget_status_daily
            where status_date between ? and ?
        )
        select budget_name, budget_kind, status_date, monthly_budget, used_basis, used_cost,
               forecast_cost, used_pct_of_budget, forecast_pct_of_budget, thresholds_crossed
        from latest
        where recency = 1
        order by thresholds_crossed_count > 0 desc, forecast_pct_of_budget desc, budget_name
        """,
        args,
    )


def _optional(
    data: ReportData, section: str, con: duckdb.DuckDBPyConnection, tables: tuple[str, ...], load
) -> None:
    """Run `load()` when every mart it reads exists; else note why the section is missing."""
    absent = [t for t in tables if not relation_exists(con, "marts", t)]
    if absent:
        data.missing[section] = (
            f"marts.{', marts.'.join(absent)} not in this warehouse (run `kubeledger build`)"
        )
        return
    try:
        load()
    except duckdb.Error as exc:
        data.missing[section] = f"could not read {', '.join(tables)}: {exc}".splitlines()[0]


def load_report_data(con: duckdb.DuckDBPyConnection, month: str, *, top: int = 25) -> ReportData:
    """Everything the report shows for `month` (YYYY-MM); a sealed month only if it verifies."""
    from kubeledger.close.seal import VerificationError
    from kubeledger.close.verify import require_verified

    first, last = parse_month(month)
    try:
        require_verified(con, month)
    except VerificationError as exc:
        raise ReportError(str(exc)) from exc
    args = [first, last]
    lines = _bill_lines(con, month)
    sealed = bool(len(lines)) and (lines["bill_state"] == "sealed").all()
    bridge, bridge_source, close_status = _bridge(con, month, lines, sealed)
    data = ReportData(
        month=month,
        first_day=first,
        last_day=last,
        bill=_bill_summary(con, month, lines, bridge),
        bill_lines=lines,
        bridge=bridge,
        bridge_source=bridge_source,
        close_status=close_status,
    )
    if close_status is None:
        data.missing["close"] = (
            "marts.fct_bill_close_status has no rows for this month (run `kubeledger build`)"
        )

    def headline() -> None:
        data.headline = _headline(con, args)

    def backing() -> None:
        found = load_bill_backing(con, month)
        if found is not None and (found.state, found.total) != (data.bill.state, data.bill.total):
            data.missing["backing"] = (
                f"marts.rpt_metrics_bill_backing_monthly shows the {found.state} bill of "
                f"{found.total}, not this {data.bill.state} bill (run `kubeledger build`)"
            )
            return
        data.backing = found

    def teams() -> None:
        data.team_daily, data.team_month = _team_costs(con, args)

    def split() -> None:
        data.cluster_split = _cluster_split(con, args)

    def efficiency() -> None:
        data.efficiency_teams = _efficiency(con, args, "team")
        data.efficiency_clusters = _efficiency(con, args, "cluster")

    def unallocated() -> None:
        data.unallocated, data.unallocated_summary = _unallocated(con, args, top)

    def health() -> None:
        data.health_daily, data.health_summary, data.health_source = _health(con, args)

    def budgets() -> None:
        data.budgets = _budgets(con, args)

    _optional(data, "headline", con, ("fct_reconciliation_daily",), headline)
    _optional(data, "backing", con, ("rpt_metrics_bill_backing_monthly",), backing)
    _optional(data, "teams", con, ("fct_owner_costs_daily",), teams)
    _optional(data, "idle", con, ("fct_cluster_costs_daily",), split)
    _optional(data, "efficiency", con, ("fct_efficiency_daily",), efficiency)
    _optional(data, "unallocated", con, ("fct_unallocated_resources_daily",), unallocated)
    _optional(data, "health", con, ("fct_reconciliation_daily",), health)
    _optional(data, "budgets", con, ("fct_budget_status_daily",), budgets)
    return data
