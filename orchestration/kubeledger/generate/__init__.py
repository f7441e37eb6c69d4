"""The demo-fleet generator: a multi-cloud Kubernetes fleet's landing files, as the clouds
and the cluster agent write them, deterministic from a seed, as messy as production by
default (`Messiness`).

    generate_fleet(Path("demo"))  ->  demo/landing/..., demo/late/<day>/..., demo/kubeledger.yml
    generate_fleets(Path("many"), random_fleet_specs(40, random.Random(1)))
        ->  many/landing/<prefix>/..., many/late/<day>/<prefix>/..., one many/kubeledger.yml

Modules: `messiness` (the switches), `irregular` (where each irregularity goes), `fleet`
(clusters, pools, node instances), `catalog` (namespaces, workloads), `pods` (pods, owners,
claims), `tables` (the model in DuckDB), `usage` (operator reports and supplementary CSVs),
`aws` / `gcp` / `azure` (bills), `onprem` (rate card), `config` (YAML), `writer` (one fleet's
files), `multi` (many fleets).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from pathlib import Path

from kubeledger.generate.config import ConfigPart, write_config
from kubeledger.generate.fleet import Params, build_fleet
from kubeledger.generate.messiness import Messiness
from kubeledger.generate.multi import FleetSpec, generate_fleets, random_fleet_specs
from kubeledger.generate.writer import fresh_output, write_fleet

__all__ = [
    "FleetSpec",
    "Messiness",
    "generate_fleet",
    "generate_fleets",
    "random_fleet_specs",
]


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
    messiness: Messiness | None = None,
) -> dict:
    """Write `out_dir/landing/...` and `out_dir/kubeledger.yml`; return a summary.

    `clusters` takes the first N of eks-prod, gke-analytics, aks-web, onprem-dc1 (then
    eks-prod-2, …); `nodes` is the fleet total, spread evenly. The bills cover usage through
    `billed_through` (default: the last two days of usage are not billed yet). An existing
    `out_dir/landing` (and `out_dir/late`) is replaced. `gzip_usage` writes the operator
    reports as .csv.gz; `workers` is how many files are written at once (default: one per
    CPU). `messiness` switches the production irregularities (default `Messiness.all()`);
    files delivered after the first load (the restated CUR) go to `out_dir/late/<day>/`,
    listed in the summary's `late_deliveries`, to be loaded in that order after `landing/`.
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
        messiness=Messiness.all() if messiness is None else messiness,
    )
    say = progress or (lambda _message: None)
    fresh_output(out_dir)
    fleet = build_fleet(params)
    run = write_fleet(fleet, out_dir, say, gzip_usage, workers or os.cpu_count() or 1)
    config = write_config(out_dir, [ConfigPart(fleet.clusters, params.messiness, nodes=nodes)])
    return {
        "out_dir": str(out_dir),
        "config": str(config),
        "seed": seed,
        "start_date": start_date.isoformat(),
        "end_date": params.end_date.isoformat(),
        "billed_through": params.billed_through.isoformat(),
        **run.summary(),
        "seconds": round(time.perf_counter() - started, 2),
    }
