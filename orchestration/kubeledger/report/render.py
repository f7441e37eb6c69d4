"""The report as one self-contained HTML file: plotly.js inlined once, no CDN, no network.

Every section is a `<section data-section="…">` holding its chart(s) and tables; a section
whose mart is missing says "not available" instead. A tiny script records any JavaScript
error in `window.__reportErrors` (and the `data-report-errors` attribute of `<html>`), and
once every chart has drawn sets `data-render-ok="true"` on `<body>`, so a headless browser
can check the page rendered cleanly.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from kubeledger import __version__
from kubeledger.report import charts
from kubeledger.report.data import ReportData

SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CAD": "CA$", "AUD": "A$"}
PLOT_CONFIG = {"displayModeBar": False, "responsive": True}
SECTIONS = [
    ("bill", "Org bill"),
    ("bridge", "Estimate → invoice"),
    ("teams", "Cost by team"),
    ("idle", "Idle and platform share"),
    ("efficiency", "Efficiency"),
    ("unallocated", "Unallocated resources"),
    ("health", "Data health"),
    ("close", "Close status"),
]


# --- formatting ---------------------------------------------------------------------------


def currency_symbol(currency: str) -> str:
    return SYMBOLS.get(currency.upper(), f"{currency.upper()} ")


def money(value: Any, currency: str = "USD", places: int = 2) -> str:
    """`$1,234.56` (`-$1.00` when negative); `—` for nothing."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    amount = value if isinstance(value, Decimal) else Decimal(str(float(value)))
    amount = amount.quantize(Decimal(1).scaleb(-places))
    sign = "-" if amount < 0 else ""
    return f"{sign}{currency_symbol(currency)}{abs(amount):,.{places}f}"


def pct(value: Any, places: int = 1) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{float(value) * 100:.{places}f}%"


def factor(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{float(value):.6f}"


def day(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return "—"
    if isinstance(value, pd.Timestamp):
        value = value.date()
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def text(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return html.escape(str(value))


def flag(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    if value == "":
        return ""
    return "✓" if bool(value) else "✗"


def warning(value: Any) -> str:
    """A flag that is bad news when set: `⚠ yes`, else `no`."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return '<span class="warn-flag">⚠ yes</span>' if bool(value) else "no"


# --- building blocks ----------------------------------------------------------------------


Column = tuple[str, str, Callable[[Any], str], str]  # key, header, formatter, css class


def table(
    rows: Iterable[dict[str, Any]],
    columns: Sequence[Column],
    *,
    footer: dict[str, Any] | None = None,
    css: str = "",
) -> str:
    head = "".join(f'<th class="{cls}">{html.escape(title)}</th>' for _, title, _, cls in columns)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="{cls}">{fmt(row.get(key))}</td>' for key, _, fmt, cls in columns
        )
        row_class = f' class="{row["_class"]}"' if row.get("_class") else ""
        body.append(f"<tr{row_class}>{cells}</tr>")
    foot = ""
    if footer is not None:
        cells = "".join(
            f'<td class="{cls}">{fmt(footer[key]) if key in footer else ""}</td>'
            for key, _, fmt, cls in columns
        )
        foot = f"<tfoot><tr>{cells}</tr></tfoot>"
    return (
        f'<div class="table-wrap"><table class="{css}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody>{foot}</table></div>"
    )


def records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    return [
        {key: (None if (isinstance(v, float) and pd.isna(v)) else v) for key, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def chart(fig: go.Figure, chart_id: str) -> str:
    div = pio.to_html(
        fig,
        full_html=False,
        include_plotlyjs=False,
        div_id=f"chart-{chart_id}",
        config=PLOT_CONFIG,
        default_height=f"{fig.layout.height or 380}px",
    )
    return f'<div class="chart" data-chart="{chart_id}">{div}</div>'


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def unavailable(reason: str) -> str:
    return f'<div class="unavailable"><strong>Not available.</strong> {html.escape(reason)}</div>'


def section(key: str, title: str, lede: str, body: str) -> str:
    return (
        f'<section class="card" id="{key}" data-section="{key}">'
        f'<h2>{html.escape(title)}</h2><p class="lede">{lede}</p>{body}</section>'
    )


def tile(label: str, value: str, note: str = "", tone: str = "") -> str:
    return (
        f'<div class="tile {tone}"><div class="tile-label">{html.escape(label)}</div>'
        f'<div class="tile-value">{value}</div>'
        f'<div class="tile-note">{note}</div></div>'
    )


# --- sections -----------------------------------------------------------------------------


def _month_title(data: ReportData) -> str:
    return data.first_day.strftime("%B %Y")


def _state_badge(data: ReportData) -> str:
    bill = data.bill
    if bill.state == "sealed":
        return '<span class="badge sealed">SEALED</span>'
    if bill.state == "draft":
        return '<span class="badge draft">DRAFT</span>'
    return '<span class="badge empty">NO BILL</span>'


def _headline(data: ReportData) -> str:
    bill, head, cur = data.bill, data.headline, data.bill.currency
    tiles = [
        tile(
            "Org bill",
            f'<span id="org-bill-total" data-org-bill-total="{bill.total}">'
            f"{money(bill.total, cur)}</span>",
            f"{_state_badge(data)} status {html.escape(bill.status)} · "
            f"{bill.line_count} lines · {bill.cluster_count} clusters",
            "primary",
        ),
        tile(
            "Invoice slices",
            money(bill.invoice_total, cur),
            f"ledger estimate {money(bill.estimated_total, cur)}"
            + (
                f" · blended factor {factor(bill.blended_factor)}"
                if bill.blended_factor is not None
                else ""
            )
            + (
                f" · at estimate: {text(', '.join(bill.estimated_clusters))}"
                if bill.estimated_clusters
                else ""
            ),
        ),
    ]
    if head:
        tiles += [
            tile(
                "Cost in scope",
                money(head.get("cost_in_scope"), cur),
                f"{head.get('clusters', 0)} clusters, daily ledger",
            ),
            tile(
                "Idle",
                pct(head.get("idle_pct")),
                money(head.get("idle_cost"), cur),
                "warn" if (head.get("idle_pct") or 0) > 0.3 else "",
            ),
            tile(
                "Platform (shared)",
                pct(head.get("platform_pct")),
                money(head.get("shared_cost"), cur),
            ),
            tile(
                "Ownership coverage",
                pct(head.get("ownership_coverage_pct")),
                "cost ending with a team or cost center",
                "good" if (head.get("ownership_coverage_pct") or 0) >= 0.9 else "warn",
            ),
            tile(
                "Reconciled to invoice",
                pct(head.get("reconciled_pct")),
                f"{head.get('complete_days', 0)} of {head.get('cluster_days', 0)} "
                "cluster-days complete",
                "good" if (head.get("reconciled_pct") or 0) >= 0.99 else "warn",
            ),
        ]
    if data.unallocated_summary:
        summary = data.unallocated_summary
        tiles.append(
            tile(
                "Unallocated",
                money(summary.get("total"), cur),
                f"{_plural(summary.get('count', 0), 'resource')} nothing claims",
                "warn" if summary.get("count") else "good",
            )
        )
    return f'<div class="tiles">{"".join(tiles)}</div>'


def _bill_section(data: ReportData) -> str:
    bill, cur = data.bill, data.bill.currency
    lines = data.bill_lines
    if bill.state == "sealed":
        banner = (
            '<div class="banner sealed"><strong>Sealed bill</strong> '
            f"{text(bill.bill_id)} · status <strong>{text(bill.status)}</strong>"
            f" · sealed {day(bill.sealed_at)} · as of {day(bill.as_of_date)}"
            + (
                f" · billed at estimate: {text(', '.join(bill.estimated_clusters))}"
                if bill.estimated_clusters
                else ""
            )
            + ". Written once; corrections are separate bills.</div>"
        )
    elif bill.state == "draft":
        banner = (
            '<div class="banner draft"><strong>DRAFT</strong> — '
            f"{_month_title(data)} is not sealed. These lines come from the last build and "
            f"may still change; <code>kubeledger close --month {data.month}</code> seals "
            "them.</div>"
        )
    else:
        return unavailable(f"marts.fct_bill_lines_monthly has no lines for {data.month}.")
    pivot_rows: list[dict[str, Any]] = []
    clusters = sorted(lines["cluster_id"].unique())
    for line_key, group in lines.groupby("line_key", sort=True):
        row: dict[str, Any] = {"line_key": line_key}
        for cluster in clusters:
            values = group.loc[group["cluster_id"] == cluster, "billed_cost"]
            row[cluster] = sum(values, Decimal(0)) if len(values) else None
        row["total"] = sum(group["billed_cost"], Decimal(0))
        pivot_rows.append(row)
    pivot_rows.sort(key=lambda r: (-r["total"], r["line_key"]))
    footer: dict[str, Any] = {"line_key": "Org bill"}
    for cluster in clusters:
        footer[cluster] = sum(lines.loc[lines["cluster_id"] == cluster, "billed_cost"], Decimal(0))
    footer["total"] = bill.total
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    pivot_columns: list[Column] = [("line_key", "Line (cost center)", text, "")]
    pivot_columns += [(c, c, money_fmt, "num") for c in clusters]
    pivot_columns.append(("total", "Total", money_fmt, "num strong"))
    corrections = ""
    if bill.corrected_total != bill.total:
        corrections = (
            f'<p class="note">With corrections: <strong>'
            f"{money(bill.corrected_total, cur)}</strong> "
            f"({money(bill.corrected_total - bill.total, cur)}).</p>"
        )
    detail_columns: list[Column] = [
        ("cluster_id", "Cluster", text, ""),
        ("cost_family", "Family", text, ""),
        ("line_key", "Line", text, ""),
        ("estimated_cost", "Estimate", money_fmt, "num"),
        ("billed_cost", "Billed", money_fmt, "num"),
        ("is_carry_cent", "+1¢", lambda v: "+1¢" if v else "", "center"),
        ("correction_delta_cost", "Corrections", money_fmt, "num"),
        ("basis", "Basis", text, ""),
    ]
    detail = (
        f"<details><summary>All {len(lines)} bill lines</summary>"
        f"{table(records(lines), detail_columns, css='compact')}</details>"
    )
    return (
        banner
        + '<div class="split">'
        + chart(charts.bill_chart(lines, currency_symbol(cur)), "bill")
        + table(pivot_rows, pivot_columns, footer=footer)
        + "</div>"
        + corrections
        + detail
    )


def _bridge_section(data: ReportData) -> str:
    bridge, cur = data.bridge, data.bill.currency
    if bridge.empty:
        return unavailable("no cluster slices for this month.")
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    rows = []
    for cluster, group in bridge.groupby("cluster_id", sort=True):
        for row in records(group):
            rows.append(row)
        estimate = sum((Decimal(str(v)) for v in group["estimated_cost"]), Decimal(0))
        billed = sum((Decimal(str(v)) for v in group["billed_cost"]), Decimal(0))
        invoices = (
            [v for v in group["invoice_cost"] if v is not None and not pd.isna(v)]
            if "invoice_cost" in group
            else []
        )
        rows.append(
            {
                "cluster_id": f"{cluster} total",
                "cost_family": "",
                "estimated_cost": estimate,
                "invoice_cost": sum(invoices, Decimal(0)) if invoices else None,
                "billed_cost": billed,
                "factor": (billed / estimate) if estimate else None,
                "basis": "",
                "is_reconciled": "",
                "_class": "subtotal",
            }
        )
    columns: list[Column] = [
        ("cluster_id", "Cluster", text, ""),
        ("cost_family", "Family", text, ""),
        ("estimated_cost", "Ledger estimate", money_fmt, "num"),
        ("factor", "Factor", factor, "num"),
        ("invoice_cost", "Invoice slice", money_fmt, "num"),
        ("billed_cost", "Billed", money_fmt, "num strong"),
        ("basis", "Basis", text, ""),
        ("is_reconciled", "Reconciled", flag, "center"),
    ]
    html_table = table(
        rows,
        columns,
        footer={
            "cluster_id": "Org",
            "estimated_cost": data.bill.estimated_total,
            "factor": data.bill.blended_factor,
            "invoice_cost": data.bill.invoice_total,
            "billed_cost": data.bill.total,
        },
    )
    return (
        chart(charts.bridge_chart(bridge, currency_symbol(cur)), "bridge")
        + html_table
        + f'<p class="note">Source: {text(data.bridge_source)}. Factor = billed / '
        "ledger estimate per cluster and cost family; the lines are rounded down to the "
        "cent and the leftover cents go to the largest lines (SPEC §9).</p>"
    )


def _teams_section(data: ReportData, colours: dict[str, str]) -> str:
    if "teams" in data.missing:
        return unavailable(data.missing["teams"])
    cur = data.bill.currency
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    month = data.team_month if data.team_month is not None else pd.DataFrame()
    total = float(month["total_cost"].sum()) if not month.empty else 0.0
    rows = records(month)
    for row in rows:
        row["share"] = (row["total_cost"] / total) if total else None
        row["team_label"] = (
            f'<span class="swatch" style="background:'
            f'{colours.get(row["team"], "#999")}"></span>{text(row["team"])}'
        )
    columns: list[Column] = [
        ("team_label", "Team", lambda v: v, ""),
        ("total_cost", "Total", money_fmt, "num strong"),
        ("share", "Share", pct, "num"),
        ("direct_cost", "Direct", money_fmt, "num"),
        ("platform_share_cost", "Platform share", money_fmt, "num"),
        ("idle_cost", "Idle", money_fmt, "num"),
        ("unattributed_cost", "Unattributed", money_fmt, "num"),
        ("unallocated_cost", "Unallocated", money_fmt, "num"),
    ]
    footer: dict[str, Any] = {"team_label": "All teams", "share": 1.0 if total else None}
    for key in (
        "total_cost",
        "direct_cost",
        "platform_share_cost",
        "idle_cost",
        "unattributed_cost",
        "unallocated_cost",
    ):
        footer[key] = float(month[key].sum()) if not month.empty else 0.0
    return (
        chart(charts.team_daily_chart(data.team_daily, colours, currency_symbol(cur)), "teams")
        + table(rows, columns, footer=footer)
        + '<p class="note">Daily ledger after distribution (fct_owner_costs_daily); the '
        "bill above scales it to the invoice per cluster and cost family.</p>"
    )


def _idle_section(data: ReportData) -> str:
    if "idle" in data.missing:
        return unavailable(data.missing["idle"])
    cur = data.bill.currency
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    rows = records(data.cluster_split)
    for row in rows:
        ledger = row["ledger_cost"] or 0.0
        idle = row["workload_idle_cost"] + row["infrastructure_idle_cost"]
        row["idle_pct"] = idle / ledger if ledger else None
        row["platform_pct"] = row["platform_cost"] / ledger if ledger else None
    columns: list[Column] = [
        ("cluster_id", "Cluster", text, ""),
        ("ledger_cost", "Cost", money_fmt, "num strong"),
        ("direct_cost", "Direct", money_fmt, "num"),
        ("workload_idle_cost", "Workload idle", money_fmt, "num"),
        ("infrastructure_idle_cost", "Infra idle", money_fmt, "num"),
        ("platform_cost", "Platform", money_fmt, "num"),
        ("unattributed_cost", "Unattributed", money_fmt, "num"),
        ("unallocated_cost", "Unallocated", money_fmt, "num"),
        ("idle_pct", "Idle %", pct, "num"),
        ("platform_pct", "Platform %", pct, "num"),
    ]
    return (
        chart(charts.split_chart(data.cluster_split), "idle")
        + table(rows, columns)
        + '<p class="note">Idle % = (workload idle + infrastructure idle) / cost; '
        "platform % = platform (shared) cost / cost (fct_cluster_costs_daily).</p>"
    )


def _efficiency_section(data: ReportData) -> str:
    if "efficiency" in data.missing:
        return unavailable(data.missing["efficiency"])
    cur = data.bill.currency
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    columns: list[Column] = [
        ("cluster_id", "Cluster", text, ""),
        ("total_efficiency", "Efficiency", pct, "num strong"),
        ("compute_cost", "Pod compute cost", money_fmt, "num"),
        ("waste_cost", "Waste (requested, unused)", money_fmt, "num"),
    ]
    return (
        '<div class="split">'
        + chart(charts.efficiency_chart(data.efficiency_teams, currency_symbol(cur)), "efficiency")
        + table(records(data.efficiency_clusters), columns)
        + "</div>"
        + '<p class="note">Efficiency = usage / request per pod and resource, rolled up '
        "weighted by cost: Σ(efficiency × cost) / Σ cost (SPEC §12).</p>"
    )


def _unallocated_section(data: ReportData) -> str:
    if "unallocated" in data.missing:
        return unavailable(data.missing["unallocated"])
    cur = data.bill.currency
    summary = data.unallocated_summary
    if not summary.get("count"):
        return (
            '<p class="good-news">Nothing unallocated this month: every billed in-scope '
            "resource is claimed by a node, volume or Service.</p>"
            + chart(charts.unallocated_chart(data.unallocated, currency_symbol(cur)), "unallocated")
        )
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    columns: list[Column] = [
        ("resource_id", "Resource ID", lambda v: f"<code>{text(v)}</code>", "id"),
        ("cluster_id", "Cluster", text, ""),
        ("resource_type", "Type", text, ""),
        ("cost_family", "Family", text, ""),
        ("unallocated_reason", "Reason", text, ""),
        ("days", "Days", text, "num"),
        ("unallocated_cost", "Cost", money_fmt, "num strong"),
    ]
    return (
        f'<p class="note">{_plural(summary["count"], "resource")}, '
        f"{money(summary['total'], cur)} this month; the {summary['shown']} costliest "
        "below, with their IDs. Never spread into idle.</p>"
        + chart(charts.unallocated_chart(data.unallocated, currency_symbol(cur)), "unallocated")
        + table(records(data.unallocated), columns)
    )


def _health_section(data: ReportData) -> str:
    if "health" in data.missing:
        return unavailable(data.missing["health"])
    summary = records(data.health_summary)
    if data.health_source == "marts.fct_data_health_daily":
        columns: list[Column] = [
            ("cluster_id", "Cluster", text, ""),
            ("days", "Days", text, "num"),
            ("complete_days", "Complete", text, "num"),
            ("attention_days", "Need attention", text, "num"),
            ("node_days_on_estimate", "Node-days on estimate", text, "num"),
            ("node_days_unpriced", "Unpriced node-days", text, "num"),
            ("match_rate", "Match rate", pct, "num"),
            ("quarantined_rows", "Quarantined rows", text, "num"),
            ("failed_expectations", "Failed checks", text, "num"),
        ]
        note = "Source: fct_data_health_daily."
    else:
        columns = [
            ("cluster_id", "Cluster", text, ""),
            ("days", "Days", text, "num"),
            ("complete_days", "Complete", text, "num"),
            ("attention_days", "Match rate < 90%", text, "num"),
            ("days_without_usage", "No usage", text, "num"),
            ("days_without_billing", "No bill", text, "num"),
            ("match_rate", "Match rate", pct, "num"),
            ("reconciled_pct", "Reconciled", pct, "num"),
        ]
        note = (
            "Source: fct_reconciliation_daily (fct_data_health_daily is not in this "
            "warehouse): a day is complete when usage and billing are present and no node "
            "is on an estimate."
        )
    return (
        chart(charts.health_chart(data.health_daily), "health")
        + table(summary, columns)
        + f'<p class="note">{html.escape(note)}</p>'
    )


def _close_section(data: ReportData) -> str:
    if data.close_status is None:
        return unavailable(data.missing.get("close", "no close status for this month."))
    cur = data.bill.currency
    money_fmt: Callable[[Any], str] = lambda v: money(v, cur)  # noqa: E731
    rows = records(data.close_status)
    blocked = [r for r in rows if r.get("close_status") == "blocked"]
    first = rows[0] if rows else {}
    when = ""
    if data.bill.state != "sealed" and first.get("closable_from_date") is not None:
        when = (
            f" Closable from {day(first.get('closable_from_date'))}; deadline "
            f"{day(first.get('deadline_date'))} (blocked clusters then bill at their "
            "estimate)."
        )
    verdict = (
        f"{len(blocked)} of {len(rows)} slices blocked."
        if blocked
        else f"All {len(rows)} slices ready."
    )
    columns: list[Column] = [
        ("cluster_id", "Cluster", text, ""),
        ("cost_family", "Family", text, ""),
        ("close_status", "Status", lambda v: f'<span class="pill {text(v)}">{text(v)}</span>', ""),
        ("reason", "Reason", text, ""),
        ("link_state", "Billing link", text, ""),
        ("days_missing", "Days missing", text, "num"),
        ("missing_dates", "Missing dates", text, ""),
        ("factor", "Factor", factor, "num"),
        ("has_factor_drift", "Drift > 0.5%", warning, "center"),
        ("target_cost", "Target", money_fmt, "num"),
        ("has_pending_correction", "Pending correction", warning, "center"),
    ]
    columns = [c for c in columns if c[0] in data.close_status.columns]
    return (
        f'<p class="note"><strong>{html.escape(verdict)}</strong>{html.escape(when)}</p>'
        + chart(charts.close_chart(data.close_status), "close")
        + table(rows, columns, css="compact")
    )


# --- the page -----------------------------------------------------------------------------


HEAD_SCRIPT = """
window.__reportErrors = [];
(function () {
  function record(message) {
    window.__reportErrors.push(String(message));
    document.documentElement.setAttribute('data-report-errors',
                                          JSON.stringify(window.__reportErrors));
  }
  window.onerror = function (message, source, line) { record(message + ' @' + line); };
  window.addEventListener('unhandledrejection', function (event) {
    record('unhandled rejection: ' + (event.reason && event.reason.message || event.reason));
  });
  var originalError = console.error;
  console.error = function () {
    record('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return originalError.apply(console, arguments);
  };
})();
"""

TAIL_SCRIPT = """
(function () {
  function check() {
    var charts = document.querySelectorAll('.plotly-graph-div');
    var drawn = 0;
    charts.forEach(function (div) {
      if (div._fullLayout && div.querySelector('.main-svg')) { drawn += 1; }
    });
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-charts-drawn', String(drawn));
    var ok = typeof Plotly !== 'undefined' && drawn === charts.length &&
             window.__reportErrors.length === 0;
    document.body.setAttribute('data-render-ok', ok ? 'true' : 'false');
  }
  if (document.readyState === 'complete') { check(); }
  else { window.addEventListener('load', function () { setTimeout(check, 0); }); }
})();
"""

CSS = """
:root { --ink:#1A202C; --muted:#718096; --line:#E2E8F0; --bg:#F7F8FA; --card:#FFFFFF;
  --accent:#4C78A8; --good:#2F855A; --warn:#B7791F; --bad:#C53030; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.5 Inter, -apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial,
  sans-serif; }
header.top { background: linear-gradient(120deg, #1F3A5F, #4C78A8); color:#fff;
  padding: 28px 40px 22px; }
header.top h1 { margin:0; font-size: 26px; font-weight: 650; letter-spacing: -0.01em; }
header.top .sub { opacity: .85; margin-top: 4px; }
header.top nav { margin-top: 14px; display:flex; flex-wrap:wrap; gap: 6px; }
header.top nav a { color:#fff; text-decoration:none; font-size:12.5px; padding: 3px 10px;
  border:1px solid rgba(255,255,255,.35); border-radius: 999px; }
header.top nav a:hover { background: rgba(255,255,255,.15); }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 60px; }
.tiles { display:grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px;
  margin-bottom: 22px; }
.tile { background: var(--card); border:1px solid var(--line); border-radius: 12px;
  padding: 14px 16px; }
.tile.primary { border-color: #A3BFDC; box-shadow: 0 1px 0 #A3BFDC inset; }
.tile-label { color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: .05em; }
.tile-value { font-size: 24px; font-weight: 650; margin: 2px 0;
  font-variant-numeric: tabular-nums; }
.tile.good .tile-value { color: var(--good); } .tile.warn .tile-value { color: var(--warn); }
.tile-note { color: var(--muted); font-size: 12px; }
.card { background: var(--card); border:1px solid var(--line); border-radius: 14px;
  padding: 20px 24px; margin-bottom: 20px; }
.card h2 { margin: 0 0 2px; font-size: 18px; }
.lede { color: var(--muted); margin: 0 0 12px; }
.split { display:grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); gap: 20px;
  align-items: start; }
@media (max-width: 1000px) { .split { grid-template-columns: 1fr; } }
.chart { min-width: 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px;
  font-variant-numeric: tabular-nums; }
th { text-align:left; color: var(--muted); font-weight: 600; font-size: 12px;
  border-bottom: 2px solid var(--line); padding: 6px 8px; white-space: nowrap; }
td { border-bottom: 1px solid var(--line); padding: 5px 8px; vertical-align: top; }
tbody tr:hover { background: #F3F6FA; }
tr.subtotal td { font-weight: 600; background: #F7FAFC; }
tfoot td { font-weight: 700; border-top: 2px solid var(--ink); border-bottom: none; }
table.compact td { padding: 3px 8px; }
.num { text-align: right; white-space: nowrap; } th.num { text-align: right; }
.center { text-align: center; } .strong { font-weight: 600; }
td.id code { font-size: 12px; word-break: break-all; }
.note { color: var(--muted); font-size: 12.5px; margin: 10px 0 0; }
.good-news { color: var(--good); } .warn-flag { color: var(--bad); font-weight: 600; }
.unavailable { background: #F7FAFC; border: 1px dashed #CBD5E0; border-radius: 10px;
  padding: 14px 16px; color: var(--muted); }
.banner { border-radius: 10px; padding: 10px 14px; margin-bottom: 14px; }
.banner.draft { background: #FFFAF0; border: 1px solid #F6AD55; color: #7B341E; }
.banner.sealed { background: #F0FFF4; border: 1px solid #9AE6B4; color: #22543D; }
.badge { display:inline-block; font-size: 11px; font-weight: 700; letter-spacing: .08em;
  border-radius: 6px; padding: 1px 7px; vertical-align: middle; }
.badge.draft { background:#FEEBC8; color:#9C4221; } .badge.sealed { background:#C6F6D5;
  color:#22543D; } .badge.empty { background:#EDF2F7; color:#4A5568; }
header.top .badge { font-size: 13px; margin-left: 10px; }
.pill { border-radius: 999px; padding: 0 8px; font-size: 12px; background:#EDF2F7; }
.pill.ready { background:#C6F6D5; color:#22543D; } .pill.blocked { background:#FED7D7;
  color:#822727; } .pill.estimated_fallback { background:#FEFCBF; color:#744210; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:3px; margin-right:7px; }
details { margin-top: 12px; } summary { cursor: pointer; color: var(--accent); }
footer { color: var(--muted); font-size: 12px; text-align:center; padding: 10px 0 30px; }
code { background: #EDF2F7; border-radius: 4px; padding: 0 4px; }
@media print { header.top nav { display:none; } .card { break-inside: avoid; } }
"""

LEDES = {
    "bill": (
        "What each cost center pays this month, per cluster: lines rounded to the cent "
        "that add up exactly to the invoice."
    ),
    "bridge": (
        "Per cluster and cost family, from the ledger's estimate to what is billed: the "
        "invoice slice is the target, the factor scales every line to it."
    ),
    "teams": "Every day's cost after shared and idle cost were distributed, by team.",
    "idle": (
        "Where each cluster's money went: used, reserved but idle, shared platform, "
        "capacity nobody reserved, unclaimed disks and traffic, unallocated."
    ),
    "efficiency": (
        "How much of what was reserved was used, weighted by cost — per team "
        "(chart) and per cluster (table)."
    ),
    "unallocated": (
        "Billed resources nothing in Kubernetes claims — find them, then tag or delete them."
    ),
    "health": (
        "Whether the data behind each day is complete: usage and bill present, nodes "
        "priced from the bill."
    ),
    "close": (
        "Whether the month can close, per cluster and cost family, and the factor's "
        "drift from 1.0 (reported above 0.5%)."
    ),
}


def render_report(data: ReportData, *, generated_at: dt.datetime | None = None) -> str:
    """The whole report as one HTML string."""
    generated_at = generated_at or dt.datetime.now(dt.UTC).replace(microsecond=0)
    team_names: list[str] = []
    if data.team_month is not None:
        team_names = list(data.team_month["team"])
    colours = charts.colour_map(team_names)
    bodies = {
        "bill": _bill_section(data),
        "bridge": _bridge_section(data),
        "teams": _teams_section(data, colours),
        "idle": _idle_section(data),
        "efficiency": _efficiency_section(data),
        "unallocated": _unallocated_section(data),
        "health": _health_section(data),
        "close": _close_section(data),
    }
    sections = "".join(section(key, title, LEDES[key], bodies[key]) for key, title in SECTIONS)
    nav = "".join(f'<a href="#{key}">{html.escape(title)}</a>' for key, title in SECTIONS)
    meta = {
        "month": data.month,
        "bill_state": data.bill.state,
        "org_bill_total": str(data.bill.total),
        "currency": data.bill.currency,
        "missing": data.missing,
    }
    title = f"kubeledger chargeback — {_month_title(data)}"
    return f"""<!DOCTYPE html>
<html lang="en" data-report-errors="[]">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="kubeledger {html.escape(__version__)}">
<title>{html.escape(title)}{" (DRAFT)" if data.bill.state == "draft" else ""}</title>
<script>{HEAD_SCRIPT}</script>
<script type="text/javascript">{get_plotlyjs()}</script>
<style>{CSS}</style>
<script type="application/json" id="report-meta">{html.escape(json.dumps(meta))}</script>
</head>
<body data-render-ok="pending" data-month="{data.month}" data-bill-state="{data.bill.state}">
<header class="top">
  <h1>Kubernetes chargeback · {html.escape(_month_title(data))}{_state_badge(data)}</h1>
  <div class="sub">UTC days {data.first_day} to {data.last_day} · currency
    {html.escape(data.bill.currency)} · generated {generated_at.strftime("%Y-%m-%d %H:%M")} UTC
  </div>
  <nav>{nav}</nav>
</header>
<main>
{_headline(data)}
{sections}
</main>
<footer>kubeledger {html.escape(__version__)} · marts in the warehouse, SPEC §8, §9, §12 ·
self-contained: opens offline</footer>
<script>{TAIL_SCRIPT}</script>
</body>
</html>
"""


def write_report(data: ReportData, path: Path, *, generated_at: dt.datetime | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(data, generated_at=generated_at), encoding="utf-8")
    return path
