"""Run the benchmark's stages, each in a child process, and measure them from outside.

Wall time is the child's, start to exit. Peak memory is the child's maximum resident set
size as the kernel reports it when the child is reaped (`os.wait4`): the largest of the
process itself and every descendant it waited for, so dbt (in-process), DuckDB and the
generator's threads are all in it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeledger.bench.report import dbt_timings, write_report
from kubeledger.bench.stages import StageSpec, write_spec

PIPELINE = ("generate", "load", "build", "close", "incremental")
# The same stages on a Spark cluster through its Thrift Server (a cluster of the benchmark's
# own, started before and stopped after them, on ports apart from `make spark-up`'s).
SPARK_PIPELINE = ("spark_load", "spark_build", "spark_close", "spark_incremental")
SPARK_MASTER_PORT, SPARK_THRIFT_PORT = 7179, 10013


class BenchError(RuntimeError):
    """A stage failed; the message names the stage and its log."""


@dataclass
class BenchConfig:
    nodes: list[int] = field(default_factory=lambda: [100, 1000])
    days: int = 30
    pods_per_node: int = 25
    clusters: int = 4
    out_dir: Path = Path("bench-out")
    work_dir: Path | None = None  # default: out_dir/work
    keep: bool = False  # keep each fleet's landing files and warehouse
    spark_nodes: list[int] = field(default_factory=lambda: [100])  # fleets also run on Spark


def _run_stage(
    stage: str, spec: StageSpec, logs: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    work = Path(spec.work_dir)
    spec_path = work / "spec.json"
    result_path = work / f"result-{stage}.json"
    result_path.unlink(missing_ok=True)
    write_spec(spec, spec_path)
    log_path = logs / f"{stage}.log"
    command = [sys.executable, "-m", "kubeledger.bench.stages", stage, str(spec_path)]
    command.append(str(result_path))
    started = time.perf_counter()
    with log_path.open("w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        raise BenchError(f"stage {stage} failed (exit {child.returncode}); log {log_path}:\n{tail}")
    facts = json.loads(result_path.read_text())
    facts.update(
        stage=stage,
        wall_seconds=round(wall, 2),
        peak_rss_bytes=usage.ru_maxrss * 1024,  # Linux reports KiB
        cpu_seconds=round(usage.ru_utime + usage.ru_stime, 1),
    )
    return facts


def _machine() -> dict[str, Any]:
    import dbt.version
    import duckdb

    memory = None
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    return {
        "cpus": os.cpu_count(),
        "memory_bytes": memory,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "duckdb": duckdb.__version__,
        "dbt_core": dbt.version.__version__,
    }


def run_fleet(
    nodes: int, config: BenchConfig, say: Callable[[str], None] = print
) -> dict[str, Any]:
    """Run every stage on one fleet size; return its figures."""
    work_root = config.work_dir or config.out_dir / "work"
    work = (work_root / f"nodes-{nodes}").resolve()
    if work.exists():
        shutil.rmtree(work)
    logs = config.out_dir.resolve() / "logs" / f"nodes-{nodes}"
    if logs.exists():
        shutil.rmtree(logs)
    logs.mkdir(parents=True)
    work.mkdir(parents=True)
    spec = StageSpec(
        work_dir=str(work),
        nodes=nodes,
        days=config.days,
        pods_per_node=config.pods_per_node,
        clusters=config.clusters,
    )
    stages: list[dict[str, Any]] = []
    for stage in (*PIPELINE, "baseline"):
        say(f"    {nodes} nodes: {stage} …")
        facts = _run_stage(stage, spec, logs)
        say(
            f"    {nodes} nodes: {stage} {facts['wall_seconds']:.1f}s, "
            f"peak {facts['peak_rss_bytes'] / 2**20:,.0f} MiB, {facts['rows']:,} rows"
        )
        stages.append(facts)
    disk = {
        "landing_bytes": _bytes_under(spec.landing),
        "warehouse_bytes": sum(
            path.stat().st_size for path in work.glob(f"{spec.db.name}*") if path.is_file()
        ),
    }
    if nodes in config.spark_nodes:
        stages += _run_spark(spec, work, logs, say)
    timings = {
        name: dbt_timings(work / f"run_results-{name}.json")
        for name in ("build", "close", "incremental", "spark_build")
        if (work / f"run_results-{name}.json").exists()
    }
    for name in ("build", "close", "incremental", "spark_build"):
        source = work / f"run_results-{name}.json"
        if source.exists():
            shutil.copy(source, logs / source.name)
    result = {
        "nodes": nodes,
        "days": config.days,
        "pods_per_node": config.pods_per_node,
        "clusters": config.clusters,
        "incremental_day": spec.incremental_day.isoformat(),
        "stages": stages,
        "dbt": timings,
        "disk": disk,
    }
    if not config.keep:
        shutil.rmtree(work)
    return result


def _bytes_under(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _run_spark(
    spec: StageSpec, work: Path, logs: Path, say: Callable[[str], None]
) -> list[dict[str, Any]]:
    """The Spark stages on a cluster started for them (and stopped, whatever happens)."""
    from kubeledger.spark.cluster import ClusterSettings, start_cluster, stop_cluster

    settings = ClusterSettings(
        root=work / "spark", master_port=SPARK_MASTER_PORT, thrift_port=SPARK_THRIFT_PORT
    )
    env = {
        **os.environ,
        "KUBELEDGER_SPARK_CLUSTER_DIR": str(settings.root),
        "KUBELEDGER_SPARK_THRIFT_PORT": str(settings.thrift_port),
    }
    stages = []
    say(f"    {spec.nodes} nodes: starting a Spark cluster …")
    try:
        start_cluster(settings)
        for stage in SPARK_PIPELINE:
            say(f"    {spec.nodes} nodes: {stage} …")
            facts = _run_stage(stage, spec, logs, env)
            say(f"    {spec.nodes} nodes: {stage} {facts['wall_seconds']:.1f}s")
            stages.append(facts)
    finally:
        stop_cluster(settings)
    return stages


def run_bench(config: BenchConfig, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run every fleet size, write results.md and results.json; return the results."""
    config.out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "fleets": [],
    }
    for nodes in config.nodes:
        say(
            f"==> fleet of {nodes} nodes, {config.days} days, {config.pods_per_node} pods per "
            f"node, {config.clusters} clusters"
        )
        results["fleets"].append(run_fleet(nodes, config, say))
        write_report(results, config.out_dir)  # a partial report survives a later failure
    say(f"==> wrote {config.out_dir / 'results.md'} and {config.out_dir / 'results.json'}")
    return results
