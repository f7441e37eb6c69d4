"""The report's plotly figures: one function per chart, each from the frames `data` loads.

Colours are stable: a team keeps its colour in every chart, `unallocated` is always grey and
`platform` always slate, so a reader can follow a team down the page.
"""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import plotly.graph_objects as go

FONT = "Inter, -apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
PALETTE = [
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#E45756",
    "#72B7B2",
    "#B279A2",
    "#EECA3B",
    "#9D755D",
    "#FF9DA6",
    "#2F4B7C",
    "#A05195",
    "#665191",
    "#D45087",
    "#F95D6A",
    "#FFA600",
    "#003F5C",
]
FIXED_COLOURS = {"unallocated": "#BAB0AC", "platform": "#5B6770", "__unassigned__": "#BAB0AC"}
SPLIT_PARTS = [
    ("direct_cost", "Direct (used)", "#4C78A8"),
    ("workload_idle_cost", "Workload idle", "#F58518"),
    ("platform_cost", "Platform (shared)", "#5B6770"),
    ("infrastructure_idle_cost", "Infrastructure idle", "#EECA3B"),
    ("unattributed_cost", "Unattributed", "#B279A2"),
    ("unallocated_cost", "Unallocated", "#BAB0AC"),
]
HEALTH_STATES = [("ok", "#54A24B"), ("needs attention", "#EECA3B"), ("incomplete", "#E45756")]
CLOSE_COLOURS = {"ready": "#54A24B", "blocked": "#E45756", "estimated_fallback": "#EECA3B"}


def colour_map(names: list[str]) -> dict[str, str]:
    """A colour per name, by sorted order, fixed colours for the special owners."""
    colours: dict[str, str] = {}
    index = 0
    for name in sorted(set(names)):
        if name in FIXED_COLOURS:
            colours[name] = FIXED_COLOURS[name]
        else:
            colours[name] = PALETTE[index % len(PALETTE)]
            index += 1
    return colours


def _float(value: object) -> float:
    if value is None:
        return 0.0
    if isinstance(value, Decimal):
        return float(value)
    try:
        result = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if pd.isna(result) else result


def _money(currency: str) -> tuple[str, str]:
    """(the axis prefix, the d3 format of an amount at the currency's minor unit: `,.2f`
    for dollars, `,.0f` for yen, `,.3f` for dinars; SPEC §1.2)."""
    from kubeledger.currency import minor_unit_digits
    from kubeledger.report.formatting import currency_symbol

    return currency_symbol(currency), f",.{minor_unit_digits(currency)}f"


def _layout(
    fig: go.Figure, *, height: int = 380, money: str | None = None, legend: bool = True
) -> go.Figure:
    fig.update_layout(
        template="plotly_white",
        height=height,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        font={"family": FONT, "size": 12, "color": "#2D3748"},
        legend={
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.02,
            "x": 0,
            "title": None,
            "traceorder": "normal",
        },
        showlegend=legend,
        hoverlabel={"font": {"family": FONT}},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
    )
    if money:
        fig.update_yaxes(tickprefix=money, tickformat=",.0f", separatethousands=True)
    return fig


def bill_chart(lines: pd.DataFrame, currency: str) -> go.Figure:
    """The org bill by line (cost center or team), stacked by cluster."""
    symbol, amount = _money(currency)
    fig = go.Figure()
    if lines.empty:
        return _layout(fig)
    frame = lines.assign(billed=lines["billed_cost"].map(_float))
    order = frame.groupby("line_key")["billed"].sum().sort_values(ascending=False).index.tolist()
    colours = dict(zip(sorted(frame["cluster_id"].unique()), PALETTE, strict=False))
    for cluster, group in frame.groupby("cluster_id", sort=True):
        by_line = group.groupby("line_key")["billed"].sum().reindex(order, fill_value=0.0)
        fig.add_bar(
            name=cluster,
            x=order,
            y=by_line.values,
            marker_color=colours[cluster],
            hovertemplate=f"{cluster}<br>%{{x}}: {symbol}%{{y:{amount}}}<extra></extra>",
        )
    fig.update_layout(barmode="stack")
    return _layout(fig, money=symbol)


def bridge_chart(bridge: pd.DataFrame, currency: str) -> go.Figure:
    """Per cluster: the ledger estimate, the invoice slice and what was billed."""
    symbol, amount = _money(currency)
    fig = go.Figure()
    if bridge.empty:
        return _layout(fig)
    frame = bridge.assign(
        estimate=bridge["estimated_cost"].map(_float),
        invoice=bridge["invoice_cost"].map(_float) if "invoice_cost" in bridge else 0.0,
        billed=bridge["billed_cost"].map(_float),
    )
    per_cluster = frame.groupby("cluster_id", sort=True)[["estimate", "invoice", "billed"]].sum()
    factors = [
        (row.billed / row.estimate) if row.estimate else None for row in per_cluster.itertuples()
    ]
    for column, label, colour in (
        ("estimate", "Ledger estimate", "#9ECAE9"),
        ("invoice", "Invoice slice", "#F58518"),
        ("billed", "Billed", "#4C78A8"),
    ):
        fig.add_bar(
            name=label,
            x=per_cluster.index.tolist(),
            y=per_cluster[column].values,
            marker_color=colour,
            hovertemplate=f"%{{x}}<br>{label}: {symbol}%{{y:{amount}}}<extra></extra>",
            text=[f"×{f:.4f}" if (f is not None and column == "billed") else "" for f in factors]
            if column == "billed"
            else None,
            textposition="outside" if column == "billed" else None,
        )
    fig.update_layout(barmode="group")
    return _layout(fig, money=symbol)


def team_daily_chart(team_daily: pd.DataFrame, colours: dict[str, str], currency: str) -> go.Figure:
    """Cost by team per day over the month, stacked."""
    symbol, amount = _money(currency)
    fig = go.Figure()
    if team_daily.empty:
        return _layout(fig)
    totals = team_daily.groupby("team")["total_cost"].sum().sort_values(ascending=False)
    for team in totals.index:
        group = team_daily[team_daily["team"] == team]
        fig.add_bar(
            name=team,
            x=group["usage_date"],
            y=group["total_cost"],
            marker_color=colours.get(team, "#999999"),
            hovertemplate=f"{team}<br>%{{x|%b %d}}: {symbol}%{{y:{amount}}}<extra></extra>",
        )
    fig.update_layout(barmode="stack", bargap=0.15)
    fig.update_xaxes(tickformat="%b %d", dtick=86400000 * 2)
    return _layout(fig, height=420, money=symbol)


def split_chart(split: pd.DataFrame) -> go.Figure:
    """Per cluster, the share of cost in each part: direct, idle, platform, …"""
    fig = go.Figure()
    if split.empty:
        return _layout(fig)
    frame = split.copy()
    total = frame["ledger_cost"].where(frame["ledger_cost"] != 0)
    for column, label, colour in SPLIT_PARTS:
        share = (frame[column] / total).fillna(0.0)
        fig.add_bar(
            name=label,
            y=frame["cluster_id"],
            x=share,
            orientation="h",
            marker_color=colour,
            text=[f"{value:.0%}" if value >= 0.06 else "" for value in share],
            textposition="inside",
            insidetextanchor="middle",
            hovertemplate=f"%{{y}}<br>{label}: %{{x:.1%}}<extra></extra>",
        )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(tickformat=".0%", range=[0, 1])
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, height=max(220, 70 * len(frame) + 90))


def efficiency_chart(teams: pd.DataFrame, currency: str) -> go.Figure:
    """Cost-weighted efficiency per team (usage / request), with the waste it cost."""
    symbol, amount = _money(currency)
    fig = go.Figure()
    if teams.empty:
        return _layout(fig, legend=False)
    frame = teams.sort_values("total_efficiency", ascending=True, na_position="first")
    efficiency = frame["total_efficiency"].fillna(0.0)
    fig.add_bar(
        y=frame["team"],
        x=efficiency,
        orientation="h",
        marker_color=[efficiency_colour(value) for value in efficiency],
        text=[
            f"{e:.0%} · waste {symbol}{w:,.0f}"
            for e, w in zip(efficiency, frame["waste_cost"], strict=True)
        ],
        textposition="auto",
        customdata=frame["waste_cost"],
        hovertemplate=(
            f"%{{y}}<br>efficiency %{{x:.1%}}<br>waste "
            f"{symbol}%{{customdata:{amount}}}<extra></extra>"
        ),
    )
    fig.update_xaxes(tickformat=".0%", range=[0, 1.05])
    return _layout(fig, height=max(220, 38 * len(frame) + 80), legend=False)


def efficiency_colour(value: float) -> str:
    """Red at 0%, amber at 50%, green at 100% (explicit colours: plotly picks the text colour
    inside a bar from the bar's colour, which it cannot do for a colour scale)."""
    stops = [(0.0, (0xE4, 0x57, 0x56)), (0.5, (0xEE, 0xCA, 0x3B)), (1.0, (0x54, 0xA2, 0x4B))]
    value = min(max(float(value), 0.0), 1.0)
    for (low, low_rgb), (high, high_rgb) in zip(stops, stops[1:], strict=False):
        if value <= high:
            weight = (value - low) / (high - low)
            rgb = [round(a + (b - a) * weight) for a, b in zip(low_rgb, high_rgb, strict=True)]
            return "#" + "".join(f"{channel:02X}" for channel in rgb)
    return "#54A24B"


def unallocated_chart(unallocated: pd.DataFrame, currency: str) -> go.Figure:
    """The costliest unallocated resources, by reason."""
    symbol, amount = _money(currency)
    fig = go.Figure()
    if unallocated.empty:
        return _layout(fig)
    frame = unallocated.iloc[::-1]
    labels = [f"{row.cluster_id} · {_short(row.resource_id)}" for row in frame.itertuples()]
    reasons = sorted(frame["unallocated_reason"].unique())
    colours = dict(zip(reasons, ["#B279A2", "#E45756", "#F58518"], strict=False))
    for reason in reasons:
        mask = (frame["unallocated_reason"] == reason).to_numpy()
        fig.add_bar(
            name=reason,
            orientation="h",
            y=[label for label, keep in zip(labels, mask, strict=True) if keep],
            x=frame.loc[mask, "unallocated_cost"],
            marker_color=colours.get(reason, "#999999"),
            customdata=frame.loc[mask, "resource_id"],
            hovertemplate=f"%{{customdata}}<br>{symbol}%{{x:{amount}}}<extra>{reason}</extra>",
        )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(tickprefix=symbol, tickformat=amount)
    return _layout(fig, height=max(170, 30 * len(frame) + 110))


def _short(resource_id: str, width: int = 42) -> str:
    text = str(resource_id)
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def health_chart(daily: pd.DataFrame) -> go.Figure:
    """Per cluster and day: ok, needs attention or incomplete."""
    fig = go.Figure()
    if daily.empty:
        return _layout(fig, legend=False)
    codes = {state: index for index, (state, _) in enumerate(HEALTH_STATES)}
    pivot = (
        daily.assign(code=daily["day_state"].map(codes))
        .pivot(index="cluster_id", columns="usage_date", values="code")
        .sort_index()
    )
    states = pivot.apply(
        lambda column: column.map(
            lambda code: HEALTH_STATES[int(code)][0] if pd.notna(code) else "no data"
        )
    )
    steps = len(HEALTH_STATES)
    scale = []
    for index, (_, colour) in enumerate(HEALTH_STATES):
        scale += [[index / steps, colour], [(index + 1) / steps, colour]]
    fig.add_heatmap(
        z=pivot.values,
        x=list(pivot.columns),
        y=list(pivot.index),
        zmin=-0.5,
        zmax=steps - 0.5,
        colorscale=scale,
        showscale=False,
        xgap=2,
        ygap=2,
        customdata=states.values,
        hovertemplate="%{y}<br>%{x|%b %d}: %{customdata}<extra></extra>",
    )
    for state, colour in HEALTH_STATES:
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=state,
            marker={"size": 10, "color": colour, "symbol": "square"},
        )
    fig.update_xaxes(tickformat="%b %d", showgrid=False)
    fig.update_yaxes(showgrid=False, autorange="reversed")
    return _layout(fig, height=max(200, 44 * len(pivot.index) + 100))


def close_chart(close_status: pd.DataFrame) -> go.Figure:
    """Per cluster and family: the factor's drift from 1.0, against the 0.5% report line."""
    fig = go.Figure()
    if close_status.empty:
        return _layout(fig, legend=False)
    frame = close_status.sort_values(["cluster_id", "cost_family"])
    labels = [f"{row.cluster_id} · {row.cost_family}" for row in frame.itertuples()]
    factors = [_float(f) if f is not None and not pd.isna(f) else None for f in frame["factor"]]
    drift = [(f - 1.0) * 100 if f is not None else 0.0 for f in factors]
    fig.add_bar(
        y=labels,
        x=drift,
        orientation="h",
        marker_color=[CLOSE_COLOURS.get(str(s), "#999999") for s in frame["close_status"]],
        customdata=[
            [str(s), f if f is not None else float("nan")]
            for s, f in zip(frame["close_status"], factors, strict=True)
        ],
        hovertemplate="%{y}<br>factor %{customdata[1]:.6f} (%{x:+.4f}%)<br>"
        "%{customdata[0]}<extra></extra>",
    )
    for line in (0.5, -0.5):
        fig.add_vline(x=line, line_dash="dot", line_color="#E45756", opacity=0.6)
    limit = max([0.75] + [abs(d) * 1.2 for d in drift])
    fig.update_xaxes(
        ticksuffix="%",
        range=[-limit, limit],
        zeroline=True,
        zerolinecolor="#A0AEC0",
        title_text="factor − 1 (drift above ±0.5% is reported)",
    )
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, height=max(200, 26 * len(frame) + 110), legend=False)
