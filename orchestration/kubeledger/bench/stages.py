"""What each benchmark stage does, run in a child process of its own.

    python -m kubeledger.bench.stages STAGE SPEC_JSON RESULT_JSON

SPEC_JSON is a `StageSpec` written by the runner; the stage writes its facts (rows, sub-step
timings) to RESULT_JSON. The runner measures the wall time and peak memory from outside.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb

CLOSE_MONTH = "2026-10"
CLOSE_AS_OF = dt.date(2026, 11, 20)
START_DATE = dt.date(2026, 10, 1)
# The models a daily run rebuilds by day, and everything built on them.
INCREMENTAL_SELECTOR = "config.materialized:incremental+"
# The pod-usage reports the generator writes (the loader recognises them by header; the
# baseline query only needs a glob).
POD_USAGE_GLOB = "usage/*/*/*_openshift_usage_report.0.csv*"
# From this fleet size on, the generator writes the usage reports as .csv.gz.
GZIP_FROM_NODES = 10_000


@dataclass(frozen=True)
class StageSpec:
    """Where one fleet's files live and how big it is."""

    work_dir: str
    nodes: int
    days: int
    pods_per_node: int
    clusters: int
    seed: int = 7

    @property
    def gzip_usage(self) -> bool:
        """The big fleet's usage reports are written gzip-compressed, as the operator uploads
        them (10,000 nodes would be about 66 GB of plain CSV); the loader and the baseline
        read the same .csv.gz files."""
        return self.nodes >= GZIP_FROM_NODES

    @property
    def fleet_dir(self) -> Path:
        return Path(self.work_dir) / "fleet"

    @property
    def landing(self) -> Path:
        return self.fleet_dir / "landing"

    @property
    def config(self) -> Path:
        return self.fleet_dir / "kubeledger.yml"

    @property
    def db(self) -> Path:
        return Path(self.work_dir) / "kubeledger.duckdb"

    @property
    def target_path(self) -> Path:
        return Path(self.work_dir) / "target"

    @property
    def incremental_day(self) -> dt.date:
        """The last day with usage: what the daily schedule would run."""
        return START_DATE + dt.timedelta(days=self.days - 1)

    def environment(self) -> dict[str, str]:
        """The variables every stage runs under (warehouse, configuration, dbt artifacts)."""
        return {
            "KUBELEDGER_DB": str(self.db),
            "KUBELEDGER_CONFIG": str(self.config),
            "KUBELEDGER_TARGET": "duckdb",
            "DBT_TARGET_PATH": str(self.target_path),
            "DBT_LOG_PATH": str(Path(self.work_dir) / "logs"),
        }


def _timed(steps: dict[str, float], name: str, action: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = action()
    steps[name] = round(time.perf_counter() - started, 3)
    return value


def _count(db: Path, sql: str, params: list[Any] | None = None) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute(sql, params or []).fetchone()[0] or 0)


def _keep_run_results(spec: StageSpec, stage: str) -> None:
    """dbt overwrites target/run_results.json on every command: keep this stage's copy."""
    source = spec.target_path / "run_results.json"
    if source.exists():
        shutil.copy(source, Path(spec.work_dir) / f"run_results-{stage}.json")


def generate(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.generate import generate_fleet

    summary = generate_fleet(
        spec.fleet_dir,
        seed=spec.seed,
        clusters=spec.clusters,
        nodes=spec.nodes,
        days=spec.days,
        start_date=START_DATE,
        pods_per_node=spec.pods_per_node,
        gzip_usage=spec.gzip_usage,
    )
    return {
        "rows": summary["pod_usage_rows"],
        "rows_what": "pod-hours written (operator pod reports)",
        "files": summary["files"],
        "bytes": summary["bytes"],
    }


def load(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.config import load_config
    from kubeledger.load import load_landing
    from kubeledger.warehouse import prepare_warehouse

    if spec.db.exists():
        spec.db.unlink()
    steps: dict[str, float] = {}
    _timed(steps, "prepare", lambda: prepare_warehouse(spec.db, load_config(spec.config)))
    summary = _timed(steps, "load_landing", lambda: load_landing(spec.db, spec.landing))
    return {
        "rows": summary.rows_loaded,
        "rows_what": "raw rows loaded (all landing files)",
        "rows_quarantined": summary.rows_quarantined,
        "steps": steps,
        "db_bytes": spec.db.stat().st_size,
    }


def build(spec: StageSpec) -> dict[str, Any]:
    """`kubeledger build` of every day: configuration, the quality gate, one dbt build."""
    from kubeledger.quality_gate import run_quality_gate_alongside
    from kubeledger.warehouse import parse_dbt_project, prepare_warehouse, run_dbt

    steps: dict[str, float] = {}
    _timed(steps, "prepare", lambda: prepare_warehouse(spec.db))
    # as `kubeledger build`: dbt parses the project while the gate runs
    _, manifest = _timed(
        steps,
        "quality gate (dbt parse alongside)",
        lambda: run_quality_gate_alongside(spec.db, None, None, lambda: parse_dbt_project(spec.db)),
    )
    _timed(
        steps,
        "dbt build",
        lambda: run_dbt(
            ["build", "--exclude", "resource_type:unit_test"], db_path=spec.db, manifest=manifest
        ),
    )
    _keep_run_results(spec, "build")
    return {
        "rows": _count(spec.db, "select count(*) from intermediate.int_pod_hours_allocated"),
        "rows_what": "pod-hours allocated (int_pod_hours_allocated)",
        "steps": steps,
        "db_bytes": spec.db.stat().st_size,
    }


def close(spec: StageSpec) -> dict[str, Any]:
    """`kubeledger close`: build the close models with dbt, then check and seal.

    dbt's artifacts go where the build's went, as `kubeledger close` after `kubeledger build`
    does: the close reuses the build's saved parse (a folder of its own parsed the whole
    project again, about 8 of its 10.8 s at 1,000 nodes)."""
    from kubeledger.close.closer import DbtProject, build_close_models, close_month

    project = DbtProject(target_path=spec.target_path, log_path=Path(spec.work_dir) / "logs")
    steps: dict[str, float] = {}
    _timed(
        steps,
        "dbt build (close models)",
        lambda: build_close_models(spec.db, CLOSE_MONTH, CLOSE_AS_OF, project=project),
    )
    result = _timed(
        steps,
        "seal",
        lambda: close_month(spec.db, CLOSE_MONTH, CLOSE_AS_OF, project=project, run_dbt=False),
    )
    _keep_run_results(spec, "close")
    bill = result.bill
    return {
        "rows": bill.line_count,
        "rows_what": f"bill lines sealed ({CLOSE_MONTH}, as of {CLOSE_AS_OF})",
        "steps": steps,
        "bill_status": bill.bill_status,
        "target_cost": str(bill.target_cost),
        "billed_cost": str(bill.billed_cost),
        "estimated_clusters": bill.estimated_clusters,
    }


def incremental(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.warehouse import run_dbt

    day = spec.incremental_day.isoformat()
    steps: dict[str, float] = {}
    _timed(
        steps,
        "dbt build (one day)",
        lambda: run_dbt(
            ["build", "--select", INCREMENTAL_SELECTOR, "--exclude", "resource_type:unit_test"],
            db_path=spec.db,
            dbt_vars={"start_date": day, "end_date": day},
        ),
    )
    _keep_run_results(spec, "incremental")
    return {
        "rows": _count(
            spec.db,
            "select count(*) from intermediate.int_pod_hours_allocated where usage_date = ?",
            [spec.incremental_day],
        ),
        "rows_what": f"pod-hours of {day} re-allocated",
        "steps": steps,
    }


# The pod-usage columns the ledger reads (SPEC §5), with their types: the baseline reads them
# all, typed, as the ledger must (by name: an on-prem report has no resource_id).
BASELINE_COLUMNS = {
    "report_period_start": "VARCHAR",
    "report_period_end": "VARCHAR",
    "interval_start": "VARCHAR",
    "interval_end": "VARCHAR",
    "node": "VARCHAR",
    "namespace": "VARCHAR",
    "pod": "VARCHAR",
    "pod_usage_cpu_core_seconds": "DOUBLE",
    "pod_request_cpu_core_seconds": "DOUBLE",
    "pod_limit_cpu_core_seconds": "DOUBLE",
    "pod_usage_memory_byte_seconds": "DOUBLE",
    "pod_request_memory_byte_seconds": "DOUBLE",
    "pod_limit_memory_byte_seconds": "DOUBLE",
    "node_capacity_cpu_cores": "DOUBLE",
    "node_capacity_cpu_core_seconds": "DOUBLE",
    "node_capacity_memory_bytes": "DOUBLE",
    "node_capacity_memory_byte_seconds": "DOUBLE",
    "node_role": "VARCHAR",
    "resource_id": "VARCHAR",
    "pod_labels": "VARCHAR",
}


def baseline(spec: StageSpec) -> dict[str, Any]:
    """The floor (issue 13): one query over the same pod-usage files reading every column the
    ledger needs, typed (timestamps parsed with their zone), aggregated to pod-day per cluster
    (the cluster is the report's folder)."""
    pattern = str(spec.landing / POD_USAGE_GLOB).replace("'", "''")
    types = ", ".join(f"'{name}': '{kind}'" for name, kind in BASELINE_COLUMNS.items())
    stamp = "strptime(replace({}, ' UTC', ''), '%Y-%m-%d %H:%M:%S %z')"
    with duckdb.connect() as con:
        con.execute("set enable_progress_bar = false")
        pod_hours, pod_days = con.execute(
            f"""
            with hours as (
                select
                    split_part(filename, '/', -3) as cluster_id,
                    {stamp.format("interval_start")} as interval_start,
                    {stamp.format("interval_end")} as interval_end,
                    * exclude (interval_start, interval_end, filename)
                from read_csv('{pattern}', header = true, union_by_name = true,
                    types = {{{types}}}, filename = true)
            ),
            pod_days as (
                select
                    cluster_id, node, namespace, pod,
                    cast(interval_start as date) as usage_date,
                    count(*) as hours,
                    sum(epoch(interval_end) - epoch(interval_start)) as seconds,
                    sum(pod_usage_cpu_core_seconds) as cpu_used,
                    sum(pod_request_cpu_core_seconds) as cpu_requested,
                    max(pod_limit_cpu_core_seconds) as cpu_limit,
                    sum(pod_usage_memory_byte_seconds) as memory_used,
                    sum(pod_request_memory_byte_seconds) as memory_requested,
                    max(pod_limit_memory_byte_seconds) as memory_limit,
                    max(node_capacity_cpu_core_seconds) as node_cpu,
                    max(node_capacity_memory_byte_seconds) as node_memory,
                    any_value(node_role) as node_role,
                    any_value(resource_id) as resource_id,
                    max(pod_labels) as pod_labels
                from hours
                group by all
            )
            select sum(hours), count(*) from pod_days
            """
        ).fetchone()
    return {
        "rows": int(pod_hours or 0),
        "rows_what": f"pod-hours read, typed, to {int(pod_days or 0):,} pod-days",
        "pod_days": int(pod_days or 0),
    }


def _spark_environment(spec: StageSpec) -> None:
    """The Spark stages run the `kubeledger` commands with KUBELEDGER_TARGET=spark_thrift on
    the cluster the runner started (its folder and port come from the runner's environment)."""
    os.environ["KUBELEDGER_TARGET"] = "spark_thrift"
    os.environ["KUBELEDGER_AS_OF"] = CLOSE_AS_OF.isoformat()


def spark_load(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.spark import load_to_spark

    _spark_environment(spec)
    summary = load_to_spark(spec.landing, config=spec.config)
    return {"rows": summary.rows_loaded, "rows_what": "raw rows loaded (Parquet by day)"}


def spark_build(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.spark import build_on_spark

    _spark_environment(spec)
    build_on_spark(config=spec.config, dbt_vars={"as_of": CLOSE_AS_OF.isoformat()})
    _keep_run_results(spec, "spark_build")
    return {"rows": 0, "rows_what": "(dbt build on Spark: seeds, models, data tests)"}


def spark_close(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.spark.close import close_month_on_spark

    _spark_environment(spec)
    steps: dict[str, float] = {}
    result = _timed(steps, "close + seal", lambda: close_month_on_spark(CLOSE_MONTH, CLOSE_AS_OF))
    bill = result.bill
    return {
        "rows": bill.line_count,
        "rows_what": f"bill lines sealed on Spark ({CLOSE_MONTH}, as of {CLOSE_AS_OF})",
        "steps": steps,
        "target_cost": str(bill.target_cost),
        "billed_cost": str(bill.billed_cost),
    }


def spark_incremental(spec: StageSpec) -> dict[str, Any]:
    from kubeledger.spark import build_on_spark

    _spark_environment(spec)
    day = spec.incremental_day.isoformat()
    build_on_spark(
        config=spec.config,
        select=INCREMENTAL_SELECTOR,
        dbt_vars={"start_date": day, "end_date": day, "as_of": CLOSE_AS_OF.isoformat()},
    )
    return {"rows": 0, "rows_what": f"(the incremental models for {day} on Spark)"}


STAGES: dict[str, Callable[[StageSpec], dict[str, Any]]] = {
    "spark_load": spark_load,
    "spark_build": spark_build,
    "spark_close": spark_close,
    "spark_incremental": spark_incremental,
    "generate": generate,
    "load": load,
    "build": build,
    "close": close,
    "incremental": incremental,
    "baseline": baseline,
}


def main(argv: list[str]) -> int:
    stage, spec_path, result_path = argv
    spec = StageSpec(**json.loads(Path(spec_path).read_text()))
    os.environ.update(spec.environment())
    facts = STAGES[stage](spec)
    Path(result_path).write_text(json.dumps(facts, indent=2, default=str))
    return 0


def write_spec(spec: StageSpec, path: Path) -> None:
    path.write_text(json.dumps(asdict(spec), indent=2))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
