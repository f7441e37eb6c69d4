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


def _run_stage(stage: str, spec: StageSpec, logs: Path) -> dict[str, Any]:
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
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
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
    timings = {
        name: dbt_timings(work / f"run_results-{name}.json")
        for name in ("build", "close", "incremental")
        if (work / f"run_results-{name}.json").exists()
    }
    for name in ("build", "close", "incremental"):
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
    }
    if not config.keep:
        shutil.rmtree(work)
    return result


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
