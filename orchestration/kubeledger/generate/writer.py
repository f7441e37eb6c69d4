"""Writing one fleet's landing files, and what came of it (used by one fleet and by many)."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kubeledger.generate.aws import write_aws
from kubeledger.generate.azure import write_azure
from kubeledger.generate.context import Context, connect, memory_cap_mb
from kubeledger.generate.fleet import Cluster, Fleet
from kubeledger.generate.gcp import write_gcp
from kubeledger.generate.onprem import write_rate_cards
from kubeledger.generate.pods import ClusterPods, build_cluster_pods
from kubeledger.generate.tables import load_tables
from kubeledger.generate.usage import usage_jobs, write_supplementary

# Where the generator's DuckDB spills past its memory cap (a 10,000-node fleet: many GB).
SPILL_DIR = ".duckdb-spill"


def fresh_output(out_dir: Path) -> None:
    for folder in (out_dir / "landing", out_dir / "late"):
        if folder.exists():
            shutil.rmtree(folder)
    (out_dir / "landing").mkdir(parents=True)


@dataclass
class FleetRun:
    """What writing one fleet produced."""

    fleet: Fleet
    ctx: Context
    pods: list[ClusterPods]

    def summary(self) -> dict:
        fleet, ctx = self.fleet, self.ctx
        return {
            "messiness": fleet.params.messiness.on(),
            "irregularities": fleet.irregular.summary(),
            "clusters": [
                _cluster_summary(fleet, cluster, cluster_pods)
                for cluster, cluster_pods in zip(fleet.clusters, self.pods, strict=True)
            ],
            "late_deliveries": late_deliveries([self]),
            "overcommitted_node_hours": {
                "cpu": ctx.overcommitted["cpu"],
                "memory": ctx.overcommitted["memory"],
            },
            "files": sum(ctx.files.values()),
            "pod_usage_rows": ctx.rows["koku_pod"],
            "bytes": sum(ctx.bytes.values()),
            "files_by_format": dict(sorted(ctx.files.items())),
            "rows_by_format": dict(sorted(ctx.rows.items())),
            "bytes_by_format": dict(sorted(ctx.bytes.items())),
        }


def late_deliveries(runs: list[FleetRun]) -> list[dict]:
    """Later deliveries by day: the folder to load (after landing/, in this order)."""
    by_day: dict[dt.date, dict] = {}
    for run in runs:
        for delivered, _root, path in run.ctx.late_files:
            entry = by_day.setdefault(
                delivered,
                {
                    "delivered_on": delivered.isoformat(),
                    "landing": str(run.ctx.out_dir / "late" / delivered.isoformat()),
                    "files": [],
                },
            )
            entry["files"].append(str(path))
    return [by_day[day] for day in sorted(by_day)]


def write_fleet(
    fleet: Fleet,
    out_dir: Path,
    say: Callable[[str], None],
    gzip_usage: bool,
    workers: int,
    subdir: str = "",
) -> FleetRun:
    """Every landing file of one fleet (under landing/<subdir> when given)."""
    ctx = Context(
        fleet=fleet,
        out_dir=out_dir,
        con=connect(out_dir / SPILL_DIR, memory_cap_mb(fleet.params.nodes)),
        progress=say,
        workers=workers,
        subdir=subdir,
    )
    ctx.landing.mkdir(parents=True, exist_ok=True)
    pods = []
    for cluster in fleet.clusters:
        first_uid = sum(len(p.segments) for p in pods)
        pods.append(build_cluster_pods(fleet, cluster, first_uid=first_uid))
    load_tables(ctx, pods)
    say(
        f"fleet model: {len(fleet.instances)} node instances, "
        f"{sum(len(p.segments) for p in pods)} pod segments"
    )
    for cluster in fleet.clusters:
        write_supplementary(ctx, cluster)
    ctx.run_parallel(
        [job for cluster in fleet.clusters for job in usage_jobs(ctx, cluster, gzip_usage)],
        "usage reports (runs of cluster-days)",
    )
    shutil.rmtree(out_dir / ".generating", ignore_errors=True)  # the jobs' emptied scratch
    write_aws(ctx)
    write_gcp(ctx)
    write_azure(ctx)
    write_rate_cards(ctx)
    ctx.close()
    shutil.rmtree(out_dir / SPILL_DIR, ignore_errors=True)
    return FleetRun(fleet, ctx, pods)


def _cluster_summary(fleet: Fleet, cluster: Cluster, cluster_pods: ClusterPods) -> dict:
    instances = fleet.cluster_instances(cluster.cluster_id)
    regular = [i for i in instances if not i.autoscaled]
    purchases: dict[str, int] = {}
    for instance in regular:
        if instance.gen == 0:
            purchases[instance.purchase] = purchases.get(instance.purchase, 0) + 1
    return {
        "cluster_id": cluster.cluster_id,
        "provider": cluster.provider,
        "nodes": sum(1 for i in regular if i.gen == 0),
        "node_instances": len(instances),
        "spot_replacements": sum(1 for i in regular if i.gen > 0),
        "autoscaled_nodes": sum(1 for i in instances if i.autoscaled),
        "control_plane_nodes": sum(1 for i in instances if i.role == "control-plane"),
        "purchase_options": purchases,
        "pods": len({(s["namespace"], s["pod"]) for s in cluster_pods.segments}),
        "volumes": len(cluster_pods.pvcs),
        "load_balancers": len({s["load_balancer_id"] for s in cluster_pods.lb_services}),
        "load_balancer_services": len(cluster_pods.lb_services),
        "pods_without_owner_rows": cluster_pods.omitted_owner_pods,
        "bare_pods": cluster_pods.bare_pods,
    }
