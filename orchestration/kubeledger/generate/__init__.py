"""The demo-fleet generator: a multi-cloud Kubernetes fleet's landing files, as the clouds
and the cluster agent write them, deterministic from a seed.

    generate_fleet(Path("demo"))  ->  demo/landing/... and demo/kubeledger.yml

Modules: `fleet` (clusters, pools, node instances), `catalog` (namespaces, workloads),
`pods` (pods, owners, claims), `tables` (the model in DuckDB), `usage` (operator reports and
supplementary CSVs), `aws` / `gcp` / `azure` (bills), `onprem` (rate card), `config` (YAML).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from kubeledger.generate.aws import write_aws
from kubeledger.generate.azure import write_azure
from kubeledger.generate.config import write_config
from kubeledger.generate.context import Context, connect
from kubeledger.generate.fleet import Params, build_fleet
from kubeledger.generate.gcp import write_gcp
from kubeledger.generate.onprem import write_rate_cards
from kubeledger.generate.pods import build_cluster_pods
from kubeledger.generate.tables import load_tables
from kubeledger.generate.usage import usage_jobs, write_supplementary

__all__ = ["generate_fleet"]


def generate_fleet(
    out_dir: Path,
    *,
    seed: int = 7,
    clusters: int = 4,
    nodes: int = 40,
    days: int = 45,
    start_date: dt.date = dt.date(2026, 10, 1),
    billed_through: dt.date | None = None,
    pods_per_node: int = 15,
    progress: Callable[[str], None] | None = None,
    gzip_usage: bool = False,
    workers: int | None = None,
) -> dict:
    """Write `out_dir/landing/...` and `out_dir/kubeledger.yml`; return a summary.

    `clusters` takes the first N of eks-prod, gke-analytics, aks-web, onprem-dc1 (then
    eks-prod-2, …); `nodes` is the fleet total, spread evenly. The bills cover usage through
    `billed_through` (default: the last two days of usage are not billed yet). An existing
    `out_dir/landing` is replaced. `gzip_usage` writes the operator reports as .csv.gz;
    `workers` is how many files are written at once (default: one per CPU).
    """
    if clusters < 1 or nodes < 1 or days < 1 or pods_per_node < 4:
        raise ValueError("need clusters >= 1, nodes >= 1, days >= 1, pods_per_node >= 4")
    started = time.perf_counter()
    out_dir = Path(out_dir)
    params = Params(
        seed=seed,
        clusters=clusters,
        nodes=nodes,
        days=days,
        start_date=start_date,
        billed_through=billed_through or start_date + dt.timedelta(days=days - 3),
        pods_per_node=pods_per_node,
    )
    say = progress or (lambda _message: None)
    fleet = build_fleet(params)
    landing = out_dir / "landing"
    if landing.exists():
        shutil.rmtree(landing)
    landing.mkdir(parents=True)

    ctx = Context(
        fleet=fleet,
        out_dir=out_dir,
        con=connect(),
        progress=say,
        workers=workers or os.cpu_count() or 1,
    )
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
        "usage reports (cluster-days)",
    )
    write_aws(ctx)
    write_gcp(ctx)
    write_azure(ctx)
    write_rate_cards(ctx)
    config = write_config(out_dir, fleet.clusters)
    ctx.close()

    cluster_summaries = []
    for cluster, cluster_pods in zip(fleet.clusters, pods, strict=True):
        instances = fleet.cluster_instances(cluster.cluster_id)
        purchases: dict[str, int] = {}
        for instance in instances:
            if instance.gen == 0:
                purchases[instance.purchase] = purchases.get(instance.purchase, 0) + 1
        cluster_summaries.append(
            {
                "cluster_id": cluster.cluster_id,
                "provider": cluster.provider,
                "nodes": sum(1 for i in instances if i.gen == 0),
                "node_instances": len(instances),
                "spot_replacements": sum(1 for i in instances if i.gen > 0),
                "control_plane_nodes": sum(1 for i in instances if i.role == "control-plane"),
                "purchase_options": purchases,
                "pods": len({(s["namespace"], s["pod"]) for s in cluster_pods.segments}),
                "volumes": len(cluster_pods.pvcs),
                "load_balancers": len(cluster_pods.lb_services),
                "pods_without_owner_rows": cluster_pods.omitted_owner_pods,
                "bare_pods": cluster_pods.bare_pods,
            }
        )
    return {
        "out_dir": str(out_dir),
        "config": str(config),
        "seed": seed,
        "start_date": start_date.isoformat(),
        "end_date": params.end_date.isoformat(),
        "billed_through": params.billed_through.isoformat(),
        "clusters": cluster_summaries,
        "files": sum(ctx.files.values()),
        "pod_usage_rows": ctx.rows["koku_pod"],
        "bytes": sum(ctx.bytes.values()),
        "files_by_format": dict(sorted(ctx.files.items())),
        "rows_by_format": dict(sorted(ctx.rows.items())),
        "bytes_by_format": dict(sorted(ctx.bytes.items())),
        "seconds": round(time.perf_counter() - started, 2),
    }
