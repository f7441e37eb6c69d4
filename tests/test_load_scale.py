"""The set-based path on a large pod report: row numbers follow the file, across threads."""

from __future__ import annotations

from pathlib import Path

import duckdb

from kubeledger.load import load_landing

ROWS = 300_000
BAD_ROW = 234_567
HEADER = (
    "report_period_start,report_period_end,interval_start,interval_end,node,namespace,pod,"
    "pod_usage_cpu_core_seconds,pod_request_cpu_core_seconds,pod_limit_cpu_core_seconds,"
    "pod_usage_memory_byte_seconds,pod_request_memory_byte_seconds,"
    "pod_limit_memory_byte_seconds,node_capacity_cpu_cores,node_capacity_cpu_core_seconds,"
    "node_capacity_memory_bytes,node_capacity_memory_byte_seconds,node_role,resource_id,"
    "pod_labels"
)


def write_pod_report(path: Path) -> None:
    """Data row n names pod `pod-n`; row BAD_ROW has an unreadable CPU usage."""
    lines = [HEADER]
    for n in range(1, ROWS + 1):
        hour = (n - 1) // 20_000
        usage = "not-measured" if n == BAD_ROW else f"{n % 3600}.250000"
        lines.append(
            f"2026-10-01 00:00:00 +0000 UTC,2026-11-01 00:00:00 +0000 UTC,"
            f"2026-10-06 {hour:02d}:00:00 +0000 UTC,2026-10-06 {hour:02d}:59:59 +0000 UTC,"
            f"node-{n % 500},ns-{n % 40},pod-{n},{usage},3600.000000,,"
            f"12884901888000.000000,15461882265600.000000,,4.000000,14400.000000,"
            f"16502939648.000000,59410582732800.000000,worker,i-{n % 500:017x},"
            f"label_app:app-{n % 97}|label_team:team-{n % 13}"
        )
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")


def test_a_large_pod_report_keeps_file_order_and_quarantines_one_row(tmp_path):
    landing = tmp_path / "landing"
    report = landing / "big-cluster" / "pod-usage.csv"
    write_pod_report(report)
    assert report.stat().st_size > 90_000_000  # several CSV reader buffers, read in parallel

    summary = load_landing(tmp_path / "kubeledger.duckdb", landing)

    assert summary.rows_by_table == {"koku_pod_usage": ROWS - 1}
    assert summary.rows_quarantined == 1
    with duckdb.connect(str(tmp_path / "kubeledger.duckdb")) as con:
        assert con.execute(
            "select count(*), count(*) filter (where pod <> 'pod-' || _row_number), "
            "min(_row_number), max(_row_number), count(distinct interval_start) "
            "from raw.koku_pod_usage"
        ).fetchone() == (ROWS - 1, 0, 1, ROWS, 15)
        assert con.execute(
            "select _row_number, column_name, raw_value from raw.quarantine"
        ).fetchall() == [(BAD_ROW, "pod_usage_cpu_core_seconds", "not-measured")]
        assert con.execute(
            "select count(*) from raw.koku_pod_usage where _row_number = ?", [BAD_ROW]
        ).fetchone() == (0,)
