"""The report as one self-contained HTML file: plotly.js inlined once, no CDN, no network.

The page is rendered from Jinja2 templates (templates/, autoescaped: every value is escaped
on output, markup only where a formatter returns `Markup`); this module prepares each
section's rows and columns. Every section is a `<section data-section="…">` holding its
chart(s) and tables; a section whose mart is missing says "not available" instead. A tiny
script records any JavaScript error in `window.__reportErrors` (and the `data-report-errors`
attribute of `<html>`), and once every chart has drawn sets `data-render-ok="true"` on
`<body>`, so a headless browser can check the page rendered cleanly.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from kubeledger import __version__
from kubeledger.report import charts
from kubeledger.report.data import ReportData
from kubeledger.report.formatting import (
    day,
    factor,
    flag,
    money,
    pct,
    text,
    warning,
)

__all__ = ["SECTIONS", "money", "pct", "render_report", "write_report"]

PLOT_CONFIG = {"displayModeBar": False, "responsive": True}
SECTIONS = [
    ("bill", "Org bill"),
    ("bridge", "Estimate → invoice"),
    ("teams", "Cost by team"),
    ("idle", "Idle and platform share"),
    ("efficiency", "Efficiency"),
    ("unallocated", "Unallocated resources"),
    ("budgets", "Budgets"),
    ("health", "Data health"),
    ("close", "Close status"),
]
TEMPLATES = Environment(
    loader=PackageLoader("kubeledger.report", "templates"),
    autoescape=select_autoescape(["html", "j2"], default=True),
    undefined=StrictUndefined,
    keep_trailing_newline=True,
)


# --- building blocks ----------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A table column: the row key, its header, how a value is written, its CSS class."""

    key: str
    title: str
    fmt: Callable[[Any], Any] = text
    css: str = ""


def records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    return [
        {key: (None if (isinstance(v, float) and pd.isna(v)) else v) for key, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def chart(fig: go.Figure, chart_id: str) -> Markup:
    div = pio.to_html(
        fig,
        full_html=False,
        include_plotlyjs=False,
        div_id=f"chart-{chart_id}",
        config=PLOT_CONFIG,
        default_height=f"{fig.layout.height or 380}px",
    )
    return (
        Markup('<div class="chart" data-chart="{}">').format(chart_id)
        + Markup(div)
        + Markup("</div>")
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _money_of(currency: str) -> Callable[[Any], str]:
    return lambda value: money(value, currency)


def _code(value: Any) -> Markup:
    return Markup("<code>{}</code>").format(text(value))


def _pill(value: Any) -> Markup:
    return Markup('<span class="pill {0}">{0}</span>').format(text(value))


def _raw(value: Any) -> Any:
    return value


def _month_title(data: ReportData) -> str:
    return data.first_day.strftime("%B %Y")


# --- sections: each returns what its template (templates/sections/<key>.html.j2) writes ------


def _tiles(data: ReportData) -> list[dict[str, Any]]:
    bill, head, cur = data.bill, data.headline, data.bill.currency
    badge = TEMPLATES.get_template("macros.html.j2").module.badge(bill.state)
    total = Markup('<span id="org-bill-total" data-org-bill-total="{}">{}</span>').format(
        bill.total, money(bill.total, cur)
    )
    invoice_note = f"ledger estimate {money(bill.estimated_total, cur)}"
    if bill.blended_factor is not None:
        invoice_note += f" · blended factor {factor(bill.blended_factor)}"
    if bill.estimated_clusters:
        invoice_note += f" · at estimate: {', '.join(bill.estimated_clusters)}"
    tiles = [
        {
            "label": "Org bill",
            "value": total,
            "note": badge
            + Markup(" status {} · {} lines · {} clusters").format(
                bill.status, bill.line_count, bill.cluster_count
            ),
            "tone": "primary",
        },
        {"label": "Invoice slices", "value": money(bill.invoice_total, cur), "note": invoice_note},
    ]
    if head:
        tiles += [
            {
                "label": "Cost in scope",
                "value": money(head.get("cost_in_scope"), cur),
                "note": f"{head.get('clusters', 0)} clusters, daily ledger",
            },
            {
                "label": "Idle",
                "value": pct(head.get("idle_ratio")),
                "note": money(head.get("idle_cost"), cur),
                "tone": "warn" if (head.get("idle_ratio") or 0) > 0.3 else "",
            },
            {
                "label": "Platform (shared)",
                "value": pct(head.get("platform_ratio")),
                "note": money(head.get("shared_cost"), cur),
            },
            {
                "label": "Ownership coverage",
                "value": pct(head.get("ownership_coverage_ratio")),
                "note": "cost ending with a team or cost center",
                "tone": "good" if (head.get("ownership_coverage_ratio") or 0) >= 0.9 else "warn",
            },
            {
                "label": "Reconciled to invoice",
                "value": pct(head.get("reconciled_ratio")),
                "note": f"{head.get('complete_days', 0)} of {head.get('cluster_days', 0)} "
                "cluster-days complete",
                "tone": "good" if (head.get("reconciled_ratio") or 0) >= 0.99 else "warn",
            },
        ]
    tiles += _backing_tiles(data)
    if data.unallocated_summary:
        summary = data.unallocated_summary
        tiles.append(
            {
                "label": "Unallocated",
                "value": money(summary.get("total"), cur),
                "note": f"{_plural(summary.get('count', 0), 'resource')} nothing claims",
                "tone": "warn" if summary.get("count") else "good",
            }
        )
    for tile in tiles:
        tile.setdefault("tone", "")
    return tiles


def _backing_tiles(data: ReportData) -> list[dict[str, Any]]:
    """Beside reconciled-to-invoice: how much of the bill an invoice backs, and the rest."""
    backing = data.backing
    if backing is None:
        return []
    parts = backing.parts(lambda amount: money(amount, backing.currency), pct)
    return [
        {
            "label": "Bill backed by invoice",
            "value": pct(backing.share("invoice")),
            "note": " · ".join(f"{label} {value}" for label, value in parts),
            "tone": "warn" if backing.partly_estimated else "",
        }
    ]


def _backing_words(data: ReportData) -> list[str]:
    """The first screen's sentences on the bill's backing (partly estimated, in words)."""
    if data.backing is None:
        return []
    return data.backing.sentences(lambda amount: money(amount, data.backing.currency), pct)


def _bill_context(data: ReportData) -> dict[str, Any]:
    bill, cur = data.bill, data.bill.currency
    lines = data.bill_lines
    if bill.state not in ("sealed", "draft"):
        return {"unavailable": f"marts.fct_bill_lines_monthly has no lines for {data.month}."}
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
    money_fmt = _money_of(cur)
    pivot_columns = [Column("line_key", "Line (cost center)")]
    pivot_columns += [Column(c, c, money_fmt, "num") for c in clusters]
    pivot_columns.append(Column("total", "Total", money_fmt, "num strong"))
    corrected = bill.corrected_total != bill.total
    return {
        "unavailable": None,
        "state": bill.state,
        "bill_id": text(bill.bill_id),
        "status": text(bill.status),
        "sealed_at": day(bill.sealed_at),
        "as_of": day(bill.as_of_date),
        "estimated_clusters": ", ".join(bill.estimated_clusters),
        "month_title": _month_title(data),
        "month": data.month,
        "chart": chart(charts.bill_chart(lines, cur), "bill"),
        "pivot_rows": pivot_rows,
        "pivot_columns": pivot_columns,
        "footer": footer,
        "corrected_total": money(bill.corrected_total, cur) if corrected else None,
        "correction_delta": money(bill.corrected_total - bill.total, cur) if corrected else None,
        "lines": records(lines),
        "detail_columns": [
            Column("cluster_id", "Cluster"),
            Column("cost_family", "Family"),
            Column("line_key", "Line"),
            Column("estimated_cost", "Estimate", money_fmt, "num"),
            Column("billed_cost", "Billed", money_fmt, "num"),
            Column("is_carry_cent", "+1¢", lambda v: "+1¢" if v else "", "center"),
            Column("correction_delta_cost", "Corrections", money_fmt, "num"),
            Column("basis", "Basis"),
        ],
    }


def _bridge_context(data: ReportData) -> dict[str, Any]:
    bridge, cur = data.bridge, data.bill.currency
    if bridge.empty:
        return {"unavailable": "no cluster slices for this month."}
    money_fmt = _money_of(cur)
    rows = []
    for cluster, group in bridge.groupby("cluster_id", sort=True):
        rows += records(group)
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
    return {
        "unavailable": None,
        "chart": chart(charts.bridge_chart(bridge, cur), "bridge"),
        "rows": rows,
        "columns": [
            Column("cluster_id", "Cluster"),
            Column("cost_family", "Family"),
            Column("estimated_cost", "Ledger estimate", money_fmt, "num"),
            Column("factor", "Factor", factor, "num"),
            Column("invoice_cost", "Invoice slice", money_fmt, "num"),
            Column("billed_cost", "Billed", money_fmt, "num strong"),
            Column("basis", "Basis"),
            Column("is_reconciled", "Reconciled", flag, "center"),
        ],
        "footer": {
            "cluster_id": "Org",
            "estimated_cost": data.bill.estimated_total,
            "factor": data.bill.blended_factor,
            "invoice_cost": data.bill.invoice_total,
            "billed_cost": data.bill.total,
        },
        "source": text(data.bridge_source),
    }


def _teams_context(data: ReportData, colours: dict[str, str]) -> dict[str, Any]:
    if "teams" in data.missing:
        return {"unavailable": data.missing["teams"]}
    cur = data.bill.currency
    money_fmt = _money_of(cur)
    month = data.team_month if data.team_month is not None else pd.DataFrame()
    total = float(month["total_cost"].sum()) if not month.empty else 0.0
    rows = records(month)
    for row in rows:
        row["share"] = (row["total_cost"] / total) if total else None
        row["team_label"] = Markup('<span class="swatch" style="background:{}"></span>{}').format(
            colours.get(row["team"], "#999"), text(row["team"])
        )
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
    return {
        "unavailable": None,
        "chart": chart(charts.team_daily_chart(data.team_daily, colours, cur), "teams"),
        "rows": rows,
        "columns": [
            Column("team_label", "Team", _raw),
            Column("total_cost", "Total", money_fmt, "num strong"),
            Column("share", "Share", pct, "num"),
            Column("direct_cost", "Direct", money_fmt, "num"),
            Column("platform_share_cost", "Platform share", money_fmt, "num"),
            Column("idle_cost", "Idle", money_fmt, "num"),
            Column("unattributed_cost", "Unattributed", money_fmt, "num"),
            Column("unallocated_cost", "Unallocated", money_fmt, "num"),
        ],
        "footer": footer,
    }


def _idle_context(data: ReportData) -> dict[str, Any]:
    if "idle" in data.missing:
        return {"unavailable": data.missing["idle"]}
    money_fmt = _money_of(data.bill.currency)
    rows = records(data.cluster_split)
    for row in rows:
        ledger = row["ledger_cost"] or 0.0
        idle = row["workload_idle_cost"] + row["infrastructure_idle_cost"]
        row["idle_ratio"] = idle / ledger if ledger else None
        row["platform_ratio"] = row["platform_cost"] / ledger if ledger else None
    return {
        "unavailable": None,
        "chart": chart(charts.split_chart(data.cluster_split), "idle"),
        "rows": rows,
        "columns": [
            Column("cluster_id", "Cluster"),
            Column("ledger_cost", "Cost", money_fmt, "num strong"),
            Column("direct_cost", "Direct", money_fmt, "num"),
            Column("workload_idle_cost", "Workload idle", money_fmt, "num"),
            Column("infrastructure_idle_cost", "Infra idle", money_fmt, "num"),
            Column("platform_cost", "Platform", money_fmt, "num"),
            Column("unattributed_cost", "Unattributed", money_fmt, "num"),
            Column("unallocated_cost", "Unallocated", money_fmt, "num"),
            Column("idle_ratio", "Idle %", pct, "num"),
            Column("platform_ratio", "Platform %", pct, "num"),
        ],
    }


def _efficiency_context(data: ReportData) -> dict[str, Any]:
    if "efficiency" in data.missing:
        return {"unavailable": data.missing["efficiency"]}
    cur = data.bill.currency
    money_fmt = _money_of(cur)
    return {
        "unavailable": None,
        "chart": chart(charts.efficiency_chart(data.efficiency_teams, cur), "efficiency"),
        "rows": records(data.efficiency_clusters),
        "columns": [
            Column("cluster_id", "Cluster"),
            Column("total_efficiency", "Efficiency", pct, "num strong"),
            Column("compute_cost", "Pod compute cost", money_fmt, "num"),
            Column("waste_cost", "Waste (requested, unused)", money_fmt, "num"),
        ],
    }


def _unallocated_context(data: ReportData) -> dict[str, Any]:
    if "unallocated" in data.missing:
        return {"unavailable": data.missing["unallocated"]}
    cur = data.bill.currency
    summary = data.unallocated_summary
    money_fmt = _money_of(cur)
    return {
        "unavailable": None,
        "count": summary.get("count"),
        "count_text": _plural(summary.get("count") or 0, "resource"),
        "total": money(summary.get("total"), cur),
        "shown": summary.get("shown"),
        "chart": chart(charts.unallocated_chart(data.unallocated, cur), "unallocated"),
        "rows": records(data.unallocated),
        "columns": [
            Column("resource_id", "Resource ID", _code, "id"),
            Column("cluster_id", "Cluster"),
            Column("resource_type", "Type"),
            Column("cost_family", "Family"),
            Column("unallocated_reason", "Reason"),
            Column("days", "Days", text, "num"),
            Column("unallocated_cost", "Cost", money_fmt, "num strong"),
        ],
    }


def _health_context(data: ReportData) -> dict[str, Any]:
    if "health" in data.missing:
        return {"unavailable": data.missing["health"]}
    if data.health_source == "marts.fct_data_health_daily":
        columns = [
            Column("cluster_id", "Cluster"),
            Column("days", "Days", text, "num"),
            Column("complete_days", "Complete", text, "num"),
            Column("attention_days", "Need attention", text, "num"),
            Column("node_days_on_estimate", "Node-days on estimate", text, "num"),
            Column("node_days_unpriced", "Unpriced node-days", text, "num"),
            Column("match_ratio", "Match rate", pct, "num"),
            Column("quarantined_rows", "Quarantined rows", text, "num"),
            Column("failed_expectations", "Failed checks", text, "num"),
        ]
        note = "Source: fct_data_health_daily."
    else:
        columns = [
            Column("cluster_id", "Cluster"),
            Column("days", "Days", text, "num"),
            Column("complete_days", "Complete", text, "num"),
            Column("attention_days", "Match rate < 90%", text, "num"),
            Column("days_without_usage", "No usage", text, "num"),
            Column("days_without_billing", "No bill", text, "num"),
            Column("match_ratio", "Match rate", pct, "num"),
            Column("reconciled_ratio", "Reconciled", pct, "num"),
        ]
        note = (
            "Source: fct_reconciliation_daily (fct_data_health_daily is not in this "
            "warehouse): a day is complete when usage and billing are present and no node "
            "is on an estimate."
        )
    return {
        "unavailable": None,
        "chart": chart(charts.health_chart(data.health_daily), "health"),
        "rows": records(data.health_summary),
        "columns": columns,
        "note": note,
    }


def _budgets_context(data: ReportData) -> dict[str, Any]:
    if "budgets" in data.missing:
        return {"unavailable": data.missing["budgets"]}
    frame = data.budgets if data.budgets is not None else pd.DataFrame()
    rows = records(frame)
    money_fmt = _money_of(data.bill.currency)
    crossed = [row for row in rows if row.get("thresholds_crossed")]

    def percent(value: Any) -> str:
        return text(None if value is None else f"{float(value):.2f}%")

    return {
        "unavailable": None,
        "count": len(rows),
        "verdict": (
            f"{_plural(len(crossed), 'budget')} over a threshold: "
            + ", ".join(row["budget_name"] for row in crossed)
            + "."
            if crossed
            else f"All {_plural(len(rows), 'budget')} within their thresholds."
        ),
        "chart": chart(charts.budget_chart(frame), "budgets"),
        "rows": [
            {**row, "_class": "over-budget" if row.get("thresholds_crossed") else ""}
            for row in rows
        ],
        "columns": [
            Column("budget_name", "Budget"),
            Column("status_date", "As of", day),
            Column("monthly_budget", "Budget", money_fmt, "num"),
            Column("used_cost", "Used", money_fmt, "num strong"),
            Column("used_basis", "Used from"),
            Column("forecast_cost", "Forecast", money_fmt, "num"),
            Column("used_pct_of_budget", "Used %", percent, "num"),
            Column("forecast_pct_of_budget", "Forecast %", percent, "num"),
            Column("thresholds_crossed", "Thresholds crossed"),
        ],
    }


def _close_context(data: ReportData) -> dict[str, Any]:
    if data.close_status is None:
        return {"unavailable": data.missing.get("close", "no close status for this month.")}
    money_fmt = _money_of(data.bill.currency)
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
    columns = [
        Column("cluster_id", "Cluster"),
        Column("cost_family", "Family"),
        Column("close_status", "Status", _pill),
        Column("reason", "Reason"),
        Column("link_state", "Billing link"),
        Column("days_missing", "Days missing", text, "num"),
        Column("missing_dates", "Missing dates"),
        Column("factor", "Factor", factor, "num"),
        Column("has_factor_drift", "Drift > 0.5%", warning, "center"),
        Column("target_cost", "Target", money_fmt, "num"),
        Column("has_pending_correction", "Pending correction", warning, "center"),
    ]
    return {
        "unavailable": None,
        "verdict": (
            f"{len(blocked)} of {len(rows)} slices blocked."
            if blocked
            else f"All {len(rows)} slices ready."
        ),
        "when": when,
        "chart": chart(charts.close_chart(data.close_status), "close"),
        "rows": rows,
        "columns": [c for c in columns if c.key in data.close_status.columns],
    }


# --- the page -----------------------------------------------------------------------------


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
    "budgets": (
        "Monthly budgets per team, cost center, application and cloud-charge allocation: "
        "used so far (the sealed bill once the month is sealed), and the forecast = used + "
        "the recent daily average x the days left."
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
    meta = {
        "month": data.month,
        "bill_state": data.bill.state,
        "org_bill_total": str(data.bill.total),
        "currency": data.bill.currency,
        "missing": data.missing,
    }
    return TEMPLATES.get_template("report.html.j2").render(
        version=__version__,
        title=f"kubeledger chargeback — {_month_title(data)}",
        month=data.month,
        month_title=_month_title(data),
        first_day=data.first_day,
        last_day=data.last_day,
        generated_at=generated_at,
        bill=data.bill,
        plotly_js=Markup(get_plotlyjs()),
        # JSON for scripts to read: raw in its <script> element, `<` escaped so it cannot end it
        meta_json=Markup(json.dumps(meta).replace("<", "\\u003c")),
        sections=SECTIONS,
        ledes=LEDES,
        tiles=_tiles(data),
        backing_words=_backing_words(data),
        partly_estimated=bool(data.backing and data.backing.partly_estimated),
        contexts={
            "bill": _bill_context(data),
            "bridge": _bridge_context(data),
            "teams": _teams_context(data, colours),
            "idle": _idle_context(data),
            "efficiency": _efficiency_context(data),
            "unallocated": _unallocated_context(data),
            "budgets": _budgets_context(data),
            "health": _health_context(data),
            "close": _close_context(data),
        },
    )


def write_report(data: ReportData, path: Path, *, generated_at: dt.datetime | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(data, generated_at=generated_at), encoding="utf-8")
    return path
