"""What `make demo` prints: per cluster, the month's pricing, split, figures and top teams."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import duckdb

from kubeledger.close.relations import find_relation
from kubeledger.console_table import table_lines
from kubeledger.currency import format_amount

Echo = Callable[[str], None]
# A cell's format: a str.format pattern, or a function of (value, row) for money.
Format = str | Callable[[object, tuple], str]


def month_bounds(month: str) -> tuple[dt.date, dt.date]:
    """First and last day of a `YYYY-MM` month."""
    first = dt.date.fromisoformat(f"{month}-01")
    following = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return first, following - dt.timedelta(days=1)


def _cell(fmt: Format, value: object, row: tuple) -> str:
    if value is None:
        return "-"
    return fmt.format(value) if isinstance(fmt, str) else fmt(value, row)


def _table(echo: Echo, headers: list[str], rows: list[tuple], formats: list[Format]) -> None:
    """Print `rows` formatted cell by cell (`formats`, `-` for none), numbers right-aligned."""
    cells = [
        [_cell(fmt, value, row) for fmt, value in zip(formats, row, strict=True)] for row in rows
    ]
    # text columns ("{}") read left to right; numbers line up on the right
    numbers = [i for i, fmt in enumerate(formats) if fmt != "{}"]
    for line in table_lines(headers, cells, numeric=numbers):
        echo("  " + line)


def _currencies(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, str], str]:
    """(cluster -> its billing currency, the configured default), from the config models."""
    default = "USD"
    settings = find_relation(con, "stg_config__settings")
    if settings is not None:
        row = con.execute(f"select min(currency) from {settings}").fetchone()
        default = (row[0] if row else None) or default
    clusters = find_relation(con, "stg_config__clusters")
    if clusters is None:
        return {}, default
    rows = con.execute(f"select cluster_id, currency from {clusters}").fetchall()
    return {cluster: currency or default for cluster, currency in rows}, default


def cluster_money(con: duckdb.DuckDBPyConnection) -> Callable[[object, tuple], str]:
    """A money cell of a row whose first column is the cluster, in that cluster's currency
    at its minor unit (SPEC §1.2): `$1,234.50`, `¥1,235`, `KWD 1.250`."""
    by_cluster, default = _currencies(con)
    return lambda value, row: format_amount(value, by_cluster.get(row[0], default))


def default_money(con: duckdb.DuckDBPyConnection) -> Callable[[object, tuple], str]:
    """A money cell in the configured currency (rows not of one cluster)."""
    _, default = _currencies(con)
    return lambda value, row: format_amount(value, default)


def print_month_ledger(con: duckdb.DuckDBPyConnection, month: str, echo: Echo) -> None:
    """Node pricing, the five-way split, the two daily figures and the top teams, per cluster."""
    first, last = month_bounds(month)
    money = cluster_money(con)
    args = [first, last]
    echo(f"\nNode costs, {month} (fct_node_costs_daily):")
    rows = con.execute(
        """
        select cluster_id, count(distinct node), sum(hours_run),
               sum(node_cost) filter (where pricing_basis = 'bill'),
               sum(node_cost) filter (where pricing_basis = 'rate_card'),
               sum(node_cost) filter (where pricing_basis in ('estimate', 'unpriced')),
               sum(node_cost)
        from marts.fct_node_costs_daily
        where usage_date between ? and ?
        group by cluster_id order by cluster_id
        """,
        args,
    ).fetchall()
    _table(
        echo,
        ["cluster", "nodes", "node-hours", "from bill", "rate card", "estimate", "total"],
        rows,
        ["{}", "{:,}", "{:,.0f}", money, money, money, money],
    )

    echo(f"\nWhere the money went, {month} (fct_cluster_costs_daily):")
    rows = con.execute(
        """
        select cluster_id, sum(direct_cost), sum(workload_idle_cost), sum(platform_cost),
               sum(infrastructure_idle_cost),
               sum(unattributed_storage_cost + unattributed_network_cost),
               sum(unallocated_cost), sum(ledger_cost)
        from marts.fct_cluster_costs_daily
        where usage_date between ? and ?
        group by cluster_id order by cluster_id
        """,
        args,
    ).fetchall()
    _table(
        echo,
        [
            "cluster",
            "direct",
            "workload idle",
            "platform",
            "infra idle",
            "unattributed",
            "unallocated",
            "total",
        ],
        rows,
        ["{}"] + [money] * 7,
    )

    echo(f"\nReconciliation, {month} (fct_reconciliation_daily):")
    rows = con.execute(
        """
        select cluster_id,
               sum(cost_in_scope),
               100 * (sum(reconciled_cost) / nullif(sum(cost_in_scope), 0)),
               100 * (sum(owned_cost) / nullif(sum(cost_in_scope), 0)),
               100 * sum(case when match_ratio is not null then nodes_priced_from_bill end)
                   / nullif(sum(case when match_ratio is not null then nodes_ran end), 0),
               max(unallocated_resource_count)
        from marts.fct_reconciliation_daily
        where usage_date between ? and ?
        group by cluster_id order by cluster_id
        """,
        args,
    ).fetchall()
    _table(
        echo,
        [
            "cluster",
            "cost in scope",
            "reconciled %",
            "ownership %",
            "match rate %",
            "unallocated IDs/day",
        ],
        rows,
        ["{}", money, "{:.1f}", "{:.1f}", "{:.1f}", "{:,}"],
    )

    echo(f"\nTop teams after distribution, {month} (fct_owner_costs_daily):")
    rows = con.execute(
        """
        with ranked as (
            select cluster_id, team, sum(total_cost) as cost,
                   row_number() over (partition by cluster_id order by sum(total_cost) desc,
                                      team) as team_rank
            from marts.fct_owner_costs_daily
            where usage_date between ? and ?
            group by cluster_id, team
        )
        select cluster_id, team, cost from ranked where team_rank <= 3
        order by cluster_id, team_rank
        """,
        args,
    ).fetchall()
    _table(echo, ["cluster", "team", "cost"], rows, ["{}", "{}", money])


def print_allocation_spend(con: duckdb.DuckDBPyConnection, month: str, echo: Echo) -> None:
    """The month's cloud charges outside Kubernetes per budget allocation (SPEC §10), and what
    the rules left unattributed."""
    first, _ = month_bounds(month)
    money = default_money(con)
    echo(f"\nCloud charges outside Kubernetes, {month} (fct_allocation_spend_monthly):")
    rows = con.execute(
        """
        select allocation_name, line_count, used_cost, estimated_cost, monthly_budget,
               used_pct_of_budget, thresholds_crossed
        from marts.fct_allocation_spend_monthly
        where charge_month = ?
        order by allocation_name
        """,
        [first],
    ).fetchall()
    _table(
        echo,
        ["allocation", "lines", "used", "estimated", "budget", "used %", "thresholds crossed"],
        rows,
        ["{}", "{:,}", money, money, money, "{:.1f}", "{}"],
    )
    rows = con.execute(
        """
        select placement, coalesce(attribution_rule, not_charged_reason, '-'), count(*),
               sum(effective_cost)
        from marts.fct_cloud_charge_allocations
        where charge_month = ?
        group by all order by 1, 2
        """,
        [first],
    ).fetchall()
    echo(f"\nEvery bill line of {month} by placement and rule (fct_cloud_charge_allocations):")
    _table(
        echo,
        ["placement", "rule or reason", "lines", "effective cost"],
        rows,
        ["{}", "{}", "{:,}", money],
    )


def print_budget_status(con: duckdb.DuckDBPyConnection, month: str, echo: Echo) -> None:
    """Every budget (teams, cost centers, applications, allocations: SPEC §10) on its last
    status day of the month: used, forecast and the thresholds crossed."""
    first, last = month_bounds(month)
    echo(f"\nBudgets, {month} (fct_budget_status_daily, each on its latest day):")
    rows = con.execute(
        """
        with latest as (
            select *, row_number() over (
                partition by budget_name order by status_date desc
            ) as recency
            from marts.fct_budget_status_daily
            where status_date between ? and ?
        )
        select budget_name, status_date, monthly_budget, used_cost, used_basis, forecast_cost,
               forecast_pct_of_budget, thresholds_crossed
        from latest
        where recency = 1
        order by budget_name
        """,
        [first, last],
    ).fetchall()
    _table(
        echo,
        ["budget", "as of", "budget", "used", "from", "forecast", "forecast %", "crossed"],
        rows,
        ["{}", "{}", "{:,.2f}", "{:,.2f}", "{}", "{:,.2f}", "{:.2f}", "{}"],
    )


def print_demo_summary(db: Path, *, month: str, as_of: str | None, echo: Echo) -> None:
    """Everything `make demo` shows after the build, then the close of the month."""
    with duckdb.connect(str(db), read_only=True) as con:
        print_month_ledger(con, month, echo)
        print_allocation_spend(con, month, echo)
        print_budget_status(con, month, echo)
    from kubeledger.close.demo import print_demo_close

    print_demo_close(db, month=month, as_of=as_of, echo=echo)
