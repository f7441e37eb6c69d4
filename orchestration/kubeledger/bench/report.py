"""The benchmark's report: a markdown table per fleet size, the targets, and where dbt's time
went (per-node timings from run_results.json), written as results.md and results.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GIB = 2**30
MIB = 2**20
TOP_NODES = 10
# Issue 13 / SPEC §15, per fleet size; reported, never asserted.
TARGETS = {
    1000: {
        "month_seconds": 60.0,  # load + build + close of a month
        "month_over_baseline": 5.0,
        "peak_bytes": 4 * GIB,
        "incremental_seconds": 10.0,
    },
    10000: {
        "month_seconds": 600.0,
        "peak_bytes": 8 * GIB,
        "disk_over_landing": 2.0,  # warehouse bytes / landing bytes
    },
}
TARGET_LABELS = {
    "month_seconds": "load + build + close of the month",
    "month_over_baseline": "load + build + close ÷ baseline",
    "peak_bytes": "peak memory (any stage)",
    "incremental_seconds": "one-day incremental run",
    "disk_over_landing": "warehouse on disk ÷ landing files",
}


def dbt_timings(run_results: Path) -> dict[str, Any]:
    """Per resource type (model, test, seed) the node count and summed execution seconds, and
    the slowest nodes. dbt runs nodes on several threads, so the sums exceed the wall time."""
    data = json.loads(Path(run_results).read_text())
    by_type: dict[str, dict[str, float]] = {}
    nodes = []
    for result in data.get("results", []):
        unique_id = result["unique_id"]
        kind = unique_id.split(".", 1)[0]
        seconds = float(result.get("execution_time") or 0.0)
        entry = by_type.setdefault(kind, {"count": 0, "seconds": 0.0})
        entry["count"] += 1
        entry["seconds"] = round(entry["seconds"] + seconds, 3)
        nodes.append(
            {
                "name": unique_id.split(".", 2)[-1],
                "type": kind,
                "seconds": round(seconds, 3),
                "status": str(result.get("status")),
            }
        )
    nodes.sort(key=lambda node: node["seconds"], reverse=True)
    return {
        "elapsed_seconds": round(float(data.get("elapsed_time") or 0.0), 2),
        "by_type": by_type,
        "slowest": nodes[:TOP_NODES],
    }


def _stage(fleet: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((stage for stage in fleet["stages"] if stage["stage"] == name), None)


def summary(fleet: dict[str, Any]) -> dict[str, Any]:
    """The figures the targets are about."""
    walls = {stage["stage"]: stage["wall_seconds"] for stage in fleet["stages"]}
    month = sum(walls.get(name, 0.0) for name in ("load", "build", "close"))
    pipeline_stages = [
        stage
        for stage in fleet["stages"]
        if stage["stage"] != "baseline" and not stage["stage"].startswith("spark_")
    ]
    peak = max((stage["peak_rss_bytes"] for stage in pipeline_stages), default=0)
    baseline = walls.get("baseline") or None
    figures = {
        "month_seconds": round(month, 1),
        "peak_bytes": peak,
        "incremental_seconds": walls.get("incremental"),
        "build_over_baseline": round(walls["build"] / baseline, 1)
        if baseline and "build" in walls
        else None,
        "month_over_baseline": round(month / baseline, 1) if baseline else None,
    }
    pod_hours = next(
        (stage["rows"] for stage in fleet["stages"] if stage["stage"] == "baseline"), 0
    )
    if pod_hours:
        # what a pod-hour costs, load + build + close: flat or falling as the fleet grows
        figures["month_microseconds_per_pod_hour"] = round(month / pod_hours * 1e6, 2)
    disk = fleet.get("disk") or {}
    if disk.get("landing_bytes"):
        figures["disk_over_landing"] = round(disk["warehouse_bytes"] / disk["landing_bytes"], 2)
    build = fleet.get("dbt", {}).get("build")
    if build:
        figures["build_model_seconds"] = build["by_type"].get("model", {}).get("seconds")
        figures["build_test_seconds"] = build["by_type"].get("test", {}).get("seconds")
    return figures


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f} s"


def _verdict(value: float | None, target: float) -> str:
    if value is None:
        return "–"
    return "met" if value <= target else "**missed**"


SPARK_STAGES = (
    ("load", "spark_load"),
    ("build", "spark_build"),
    ("close", "spark_close"),
    ("incremental day", "spark_incremental"),
)


def spark_lines(fleet: dict[str, Any]) -> list[str]:
    """The Spark column: each stage's wall time on DuckDB and through the Spark Thrift Server,
    and their ratio (empty when the fleet did not run on Spark)."""
    walls = {stage["stage"]: stage["wall_seconds"] for stage in fleet["stages"]}
    if "spark_build" not in walls:
        return []
    lines = [
        "",
        "On Spark (a standalone master, two workers of one core and 1 GiB, the Thrift "
        "Server's driver 1.5 GiB; the same stages through `KUBELEDGER_TARGET=spark_thrift`; "
        "the load writes raw Parquet partitioned by day; the build's data tests included):",
        "",
        "| stage | DuckDB | Spark | Spark ÷ DuckDB |",
        "| --- | ---: | ---: | ---: |",
    ]
    month = {"duck": 0.0, "spark": 0.0}
    for name, spark_name in SPARK_STAGES:
        duck_name = "incremental" if name == "incremental day" else name
        duck, spark = walls.get(duck_name), walls.get(spark_name)
        if name != "incremental day":
            month["duck"] += duck or 0.0
            month["spark"] += spark or 0.0
        ratio = f"{spark / duck:.1f}×" if duck and spark else "–"
        lines.append(f"| {name} | {_seconds(duck)} | {_seconds(spark)} | {ratio} |")
    ratio = f"{month['spark'] / month['duck']:.1f}×" if month["duck"] else "–"
    lines.append(
        f"| load + build + close | {_seconds(month['duck'])} | {_seconds(month['spark'])} "
        f"| {ratio} |"
    )
    return lines


def _measured(name: str, value: float | None) -> str:
    if value is None:
        return "–"
    if name == "peak_bytes":
        return f"{value / GIB:.2f} GiB"
    if name.endswith("_seconds"):
        return _seconds(value)
    return f"{value}×"


def _target(name: str, value: float) -> str:
    if name == "peak_bytes":
        return f"≤ {value / GIB:.0f} GiB"
    if name.endswith("_seconds"):
        return f"≤ {value:.0f} s"
    return f"≤ {value:g}×"


def target_lines(nodes: int, figures: dict[str, Any]) -> list[str]:
    """The targets of this fleet size (none between the sizes the issue names: the figures
    only), each measured, with its verdict."""
    targets = TARGETS.get(nodes)
    lines = [
        "| figure | measured | target | |",
        "| --- | ---: | ---: | --- |",
    ]
    names = list(targets or {}) + [
        name for name in TARGET_LABELS if not targets or name not in targets
    ]
    for name in names:
        value = figures.get(name)
        if targets and name in targets:
            target, verdict = _target(name, targets[name]), _verdict(value, targets[name])
        else:
            target, verdict = "", ""
        lines.append(f"| {TARGET_LABELS[name]} | {_measured(name, value)} | {target} | {verdict} |")
    per_pod_hour = figures.get("month_microseconds_per_pod_hour")
    if per_pod_hour is not None:
        lines.append(f"| load + build + close per pod-hour | {per_pod_hour} µs | | |")
    return lines


def slope_lines(fleets: list[dict[str, Any]]) -> list[str]:
    """How cost grows: µs per pod-hour at each size, and the ratio between neighbours
    (below 1: cheaper per pod-hour at the larger size)."""
    points = [
        (fleet["nodes"], fleet["summary"].get("month_microseconds_per_pod_hour"))
        for fleet in fleets
        if fleet.get("summary", {}).get("month_microseconds_per_pod_hour")
    ]
    if len(points) < 2:
        return []
    lines = [
        "",
        "## How cost grows",
        "",
        "| nodes | load + build + close per pod-hour | ÷ previous size |",
        "| ---: | ---: | ---: |",
    ]
    previous = None
    for nodes, micros in points:
        ratio = f"{micros / previous:.2f}" if previous else ""
        lines.append(f"| {nodes:,} | {micros} µs | {ratio} |")
        previous = micros
    return lines


CHART_FILE = "cost-per-pod-hour.svg"
CHART_STAGES = (("load", "#4c78a8"), ("build", "#f58518"), ("close", "#54a24b"))
CHART_WIDTH, CHART_HEIGHT, CHART_MARGIN, CHART_TOP = 520, 300, 48, 64


def cost_chart_svg(fleets: list[dict[str, Any]]) -> str | None:
    """How cost grows with the fleet, as an SVG bar chart: per fleet size, the month's load,
    build and close in µs per pod-hour, stacked (None without a fleet that has a baseline)."""
    from xml.etree import ElementTree as ET

    bars = []
    for fleet in fleets:
        pod_hours = (_stage(fleet, "baseline") or {}).get("rows")
        if not pod_hours:
            continue
        parts = [
            (name, colour, (_stage(fleet, name) or {}).get("wall_seconds") or 0.0)
            for name, colour in CHART_STAGES
        ]
        bars.append((fleet["nodes"], [(n, c, sec / pod_hours * 1e6) for n, c, sec in parts]))
    if not bars:
        return None
    top = max(sum(micros for _, _, micros in parts) for _, parts in bars)
    plot_height = CHART_HEIGHT - CHART_TOP - CHART_MARGIN
    slot = (CHART_WIDTH - 2 * CHART_MARGIN) / len(bars)
    svg = ET.Element(
        "svg",
        xmlns="http://www.w3.org/2000/svg",
        width=str(CHART_WIDTH),
        height=str(CHART_HEIGHT),
        viewBox=f"0 0 {CHART_WIDTH} {CHART_HEIGHT}",
        role="img",
    )
    ET.SubElement(svg, "title").text = "load + build + close, µs per pod-hour, by fleet size"
    text = {"font-family": "sans-serif", "font-size": "12"}
    ET.SubElement(
        svg, "text", x=str(CHART_MARGIN), y="20", **text
    ).text = "Month (load + build + close), µs per pod-hour"
    for index, (nodes, parts) in enumerate(bars):
        x = CHART_MARGIN + index * slot + slot * 0.2
        width = slot * 0.6
        y = CHART_HEIGHT - CHART_MARGIN
        for name, colour, micros in parts:
            height = plot_height * micros / top
            y -= height
            rect = ET.SubElement(
                svg,
                "rect",
                x=f"{x:.1f}",
                y=f"{y:.1f}",
                width=f"{width:.1f}",
                height=f"{height:.1f}",
                fill=colour,
            )
            ET.SubElement(rect, "title").text = f"{name}: {micros:.1f} µs"
        total = sum(micros for _, _, micros in parts)
        centre = f"{x + width / 2:.1f}"
        ET.SubElement(
            svg, "text", x=centre, y=f"{y - 6:.1f}", **{"text-anchor": "middle"}, **text
        ).text = f"{total:.1f} µs"
        ET.SubElement(
            svg,
            "text",
            x=centre,
            y=str(CHART_HEIGHT - CHART_MARGIN + 18),
            **{"text-anchor": "middle"},
            **text,
        ).text = f"{nodes:,} nodes"
    for index, (name, colour) in enumerate(CHART_STAGES):
        x = CHART_MARGIN + index * 70
        ET.SubElement(svg, "rect", x=str(x), y="30", width="10", height="10", fill=colour)
        ET.SubElement(svg, "text", x=str(x + 14), y="40", **text).text = name
    return ET.tostring(svg, encoding="unicode") + "\n"


def render(results: dict[str, Any]) -> str:
    machine = results["machine"]
    lines = [
        "# kubeledger benchmark",
        "",
        f"Run {results['started_at']} on {machine['cpus']} CPUs, "
        f"{(machine['memory_bytes'] or 0) / GIB:.0f} GiB RAM, Python {machine['python']}, "
        f"DuckDB {machine['duckdb']}, dbt-core {machine['dbt_core']}.",
        "",
        "Each stage runs in its own process; *peak RSS* is that process's maximum resident "
        "memory, children included. *Build* is `kubeledger build` (configuration, "
        "the quality gate, one dbt build of seeds, models and data tests, no unit tests). "
        "*Close* builds the close models and seals October 2026 as of 2026-11-20. "
        "*Incremental day* is `dbt build` of the incremental models and everything "
        "downstream for one day. *Baseline* is one DuckDB query reading "
        "the same pod-usage files with every column the ledger needs, typed, aggregated to "
        "pod-day: the floor no design can beat.",
    ]
    for fleet in results["fleets"]:
        lines += [
            "",
            f"## {fleet['nodes']:,} nodes ({fleet['days']} days, {fleet['pods_per_node']} pods "
            f"per node, {fleet['clusters']} clusters)",
            "",
            "| stage | rows | wall | peak RSS | CPU | of which |",
            "| --- | --- | ---: | ---: | ---: | --- |",
        ]
        for stage in fleet["stages"]:
            name = stage["stage"] if stage["stage"] != "incremental" else "incremental day"
            steps = ", ".join(
                f"{step} {seconds:,.1f} s" for step, seconds in stage.get("steps", {}).items()
            )
            lines.append(
                f"| {name} | {stage['rows']:,} {stage['rows_what']} "
                f"| {_seconds(stage['wall_seconds'])} "
                f"| {stage['peak_rss_bytes'] / MIB:,.0f} MiB "
                f"| {stage['cpu_seconds']:,.0f} s | {steps} |"
            )
        figures = summary(fleet)
        lines += ["", *target_lines(fleet["nodes"], figures)]
        lines += spark_lines(fleet)
        for name, timings in fleet.get("dbt", {}).items():
            by_type = ", ".join(
                f"{kind} {entry['count']} nodes {entry['seconds']:,.1f} s"
                for kind, entry in sorted(timings["by_type"].items())
            )
            lines += [
                "",
                f"dbt `{name}`: {timings['elapsed_seconds']:,.1f} s elapsed; summed over "
                f"nodes: {by_type}. Slowest:",
                "",
                "| node | type | seconds |",
                "| --- | --- | ---: |",
            ]
            lines += [
                f"| {node['name']} | {node['type']} | {node['seconds']:,.1f} |"
                for node in timings["slowest"]
            ]
    lines += slope_lines(results["fleets"])
    if cost_chart_svg(results["fleets"]) is not None:
        lines += ["", f"![load + build + close per pod-hour, by fleet size]({CHART_FILE})"]
    return "\n".join(lines) + "\n"


def write_report(results: dict[str, Any], out_dir: Path) -> None:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for fleet in results["fleets"]:
        fleet["summary"] = summary(fleet)
    (out_dir / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (out_dir / "results.md").write_text(render(results))
    chart = cost_chart_svg(results["fleets"])
    if chart is not None:
        (out_dir / CHART_FILE).write_text(chart)
