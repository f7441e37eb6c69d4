"""The benchmark report's figures and chart (kubeledger.bench.report), on made-up stage results:
the targets are reported, never asserted, so what is tested is that the report says the right
numbers."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from kubeledger.bench.report import (
    CHART_FILE,
    CHART_HEIGHT,
    CHART_MARGIN,
    CHART_TOP,
    cost_chart_svg,
    render,
    summary,
    write_report,
)

SVG = "{http://www.w3.org/2000/svg}"


def _stage(name: str, wall: float, rows: int = 0) -> dict:
    return {
        "stage": name,
        "wall_seconds": wall,
        "rows": rows,
        "rows_what": "rows",
        "peak_rss_bytes": 2**30,
        "cpu_seconds": wall,
    }


def _fleet(nodes: int, pod_hours: int, load: float, build: float, close: float) -> dict:
    return {
        "nodes": nodes,
        "days": 30,
        "pods_per_node": 25,
        "clusters": 4,
        "stages": [
            _stage("load", load),
            _stage("build", build),
            _stage("close", close),
            _stage("baseline", 10.0, rows=pod_hours),
        ],
    }


# 100 nodes: 2 M pod-hours in 20 + 30 + 10 s = 30 µs per pod-hour (10, 15, 5);
# 1,000 nodes: 20 M pod-hours in 100 + 150 + 50 s = 15 µs per pod-hour (5, 7.5, 2.5)
FLEETS = [
    _fleet(100, 2_000_000, 20.0, 30.0, 10.0),
    _fleet(1000, 20_000_000, 100.0, 150.0, 50.0),
]


def _bars(svg_text: str) -> list[tuple[str, float]]:
    root = ET.fromstring(svg_text)
    bars = []
    for rect in root.iter(f"{SVG}rect"):
        title = rect.find(f"{SVG}title")
        if title is not None:
            bars.append((title.text, float(rect.get("height"))))
    return bars


def test_the_month_per_pod_hour_and_its_ratio_to_the_baseline():
    figures = summary(FLEETS[1])
    assert figures["month_seconds"] == 300.0
    assert figures["month_over_baseline"] == 30.0
    assert figures["month_microseconds_per_pod_hour"] == 15.0


def test_the_chart_stacks_each_stage_in_proportion_to_its_cost_per_pod_hour():
    bars = _bars(cost_chart_svg(FLEETS))
    assert [title for title, _ in bars] == [
        "load: 10.0 µs",
        "build: 15.0 µs",
        "close: 5.0 µs",
        "load: 5.0 µs",
        "build: 7.5 µs",
        "close: 2.5 µs",
    ]
    # the tallest bar (100 nodes, 30 µs) fills the plot; everything else is to scale (pixels
    # to one decimal)
    plot = CHART_HEIGHT - CHART_TOP - CHART_MARGIN
    expected = [round(plot * micros / 30, 1) for micros in (10, 15, 5, 5, 7.5, 2.5)]
    assert [height for _, height in bars] == expected
    labels = [text.text for text in ET.fromstring(cost_chart_svg(FLEETS)).iter(f"{SVG}text")]
    assert "30.0 µs" in labels and "15.0 µs" in labels and "1,000 nodes" in labels


def test_no_chart_without_a_baseline_and_the_report_links_the_one_it_writes(tmp_path):
    without = [{**FLEETS[0], "stages": FLEETS[0]["stages"][:3]}]
    assert cost_chart_svg(without) is None
    results = {
        "started_at": "2026-12-03T00:00:00",
        "machine": {"cpus": 2, "memory_bytes": 24 * 2**30, "python": "3.11", "duckdb": "x"}
        | {"dbt_core": "1.11"},
        "fleets": [dict(fleet) for fleet in FLEETS],
    }
    write_report(results, tmp_path)
    assert (tmp_path / CHART_FILE).read_text() == cost_chart_svg(FLEETS)
    assert f"]({CHART_FILE})" in render(results)
    assert "| 1,000 | 15.0 µs | 0.50 |" in (tmp_path / "results.md").read_text()
