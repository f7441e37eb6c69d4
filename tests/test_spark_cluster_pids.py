"""The Spark cluster's processes are stopped by their PID files only, and only when the PID is
still the Spark process it was started as (kubeledger/spark/cluster.py); the Spark sealed
store's table names (kubeledger/spark/close.py). No Spark is started here."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from kubeledger.spark.close import TABLE_RE, month_suffix
from kubeledger.spark.cluster import ClusterSettings, running_pid, stop_cluster
from kubeledger.spark.runner import register_statements


def test_a_pid_that_is_not_the_spark_process_is_never_signalled(tmp_path):
    settings = ClusterSettings(root=tmp_path)
    settings.run_dir.mkdir()
    # A PID file whose process is something else (a PID reused after the cluster stopped).
    other = subprocess.Popen(["sleep", "30"])
    # until its exec, the child's command line can read empty: a process still on its way to
    # the java it starts, which running_pid counts as the Spark one (a loaded machine saw it)
    cmdline = Path(f"/proc/{other.pid}/cmdline")
    deadline = time.monotonic() + 10
    while b"sleep" not in cmdline.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        (settings.run_dir / "master.pid").write_text(f"{other.pid}\n")
        assert running_pid(settings, "master") is None
        assert stop_cluster(settings, grace=1) == []
        assert other.poll() is None  # still running: not ours to stop
        assert not (settings.run_dir / "master.pid").exists()
    finally:
        other.kill()
        other.wait()


def test_a_dead_pid_is_not_running(tmp_path):
    settings = ClusterSettings(root=tmp_path)
    settings.run_dir.mkdir()
    (settings.run_dir / "thrift.pid").write_text("999999999\n")
    assert running_pid(settings, "thrift") is None
    assert running_pid(settings, "worker1") is None  # no PID file at all


def test_raw_tables_are_registered_partitioned_by_day():
    table = {
        "schema": "raw",
        "name": "koku_pod_usage",
        "location": "/shared/parquet/raw/koku_pod_usage",
        "columns": [
            {"name": "interval_start", "type": "string"},
            {"name": "_partition_date", "type": "string"},
        ],
        "partitioned_by": "_partition_date",
    }
    assert register_statements(table) == [
        "drop table if exists `raw`.`koku_pod_usage`",
        "create table `raw`.`koku_pod_usage` (`interval_start` string, `_partition_date` string)"
        " using parquet partitioned by (`_partition_date`)"
        " location '/shared/parquet/raw/koku_pod_usage'",
        "alter table `raw`.`koku_pod_usage` recover partitions",
    ]


def test_sealed_table_names_per_month_and_correction():
    assert month_suffix("2026-10") == "2026_10"
    assert month_suffix("2026-10", 2) == "2026_10_c2"
    bill = TABLE_RE.match("sealed_bill_lines_2026_10")
    assert bill is not None and bill["base"] == "sealed_bill_lines" and bill["n"] is None
    correction = TABLE_RE.match("correction_bill_lines_2026_10_c3")
    assert correction is not None and correction["base"] == "correction_bill_lines"
    assert correction["n"] == "3"
    assert TABLE_RE.match("sealed_bills_2026_10")["base"] == "sealed_bills"
    assert TABLE_RE.match("tampered") is None
