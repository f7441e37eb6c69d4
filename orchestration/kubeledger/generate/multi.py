"""Many small fleets in one landing folder and one kubeledger.yml, for the differential test.

Each fleet has its own cluster-ID prefix (`f07-eks-prod`), its own AWS account, Google Cloud
project and billing account, Azure subscription and billing account, and IDs that cannot
collide with another fleet's (instance IDs and PV handles are hashed with the cluster ID;
node names, scale sets and on-prem LB addresses are drawn against one shared set). Fleet
`f07` writes `landing/f07/...` and, when it has a later delivery, `late/<day>/f07/...`.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kubeledger.generate.config import ConfigPart, write_config
from kubeledger.generate.fleet import KINDS, POOLS, Params, build_fleet
from kubeledger.generate.messiness import Messiness
from kubeledger.generate.writer import FleetRun, fresh_output, late_deliveries, write_fleet

# distribution presets a fleet's clusters draw from (kubeledger.config PRESETS)
PRESETS = (
    "platform_absorbs",
    "proportional",
    "hybrid",
    "user_projects_proportional",
    "user_projects_even",
)
DEFAULT_OWNERS = (
    None,
    {"team": "fleet-default", "cost_center": None, "application": None},
    {"team": None, "cost_center": "cc-9000", "application": None},
    {"team": "ops", "cost_center": "cc-9100", "application": "misc"},
)


@dataclass(frozen=True)
class FleetSpec:
    """One small fleet of a multi-fleet run."""

    prefix: str  # cluster-ID prefix, e.g. "f07" -> f07-eks-prod
    seed: int
    kinds: tuple[str, ...]  # cluster kinds, in order: eks, gke, aks, onprem
    nodes: tuple[int, ...]  # nodes per cluster (control-plane node included)
    days: int = 35
    pods_per_node: int = 6
    messiness: Messiness = field(default_factory=Messiness.all)
    # per cluster kind: a distribution.clusters section ({"preset": ...}) or None
    distribution: tuple[tuple[str, dict | None], ...] = ()
    # per cluster kind: the cluster's owner defaults or None (the generator's own)
    defaults: tuple[tuple[str, dict | None], ...] = ()


def random_fleet_specs(
    count: int,
    rng: random.Random,
    *,
    days: int = 35,
    min_nodes: int = 3,
    max_nodes: int = 8,
    pods_per_node: int = 6,
) -> list[FleetSpec]:
    """`count` fleets drawn from `rng`: a random seed, a random non-empty subset of the
    cluster kinds (every kind appears in the set when count >= 1: missing kinds are added
    to random fleets), min_nodes..max_nodes nodes per cluster, random Messiness, and random
    per-cluster distribution presets and owner defaults."""
    drawn = []
    for _ in range(count):
        kinds = [kind for kind in KINDS if rng.random() < 0.5] or [rng.choice(KINDS)]
        drawn.append(kinds)
    for kind in KINDS:
        if count and not any(kind in kinds for kinds in drawn):
            drawn[rng.randrange(count)].append(kind)
    specs = []
    width = max(2, len(str(count - 1)))
    for number, kinds in enumerate(drawn):
        kinds = sorted(kinds, key=KINDS.index)
        nodes = tuple(
            max(rng.randint(min_nodes, max_nodes), 2 if POOLS[kind][0] else 1) for kind in kinds
        )
        distribution = []
        for kind in kinds:
            preset = rng.choice((None, *PRESETS))
            section = None
            if preset == "hybrid":
                section = {"preset": preset, "hybrid_share": rng.choice((10, 25, 50))}
            elif preset is not None:
                section = {"preset": preset}
            distribution.append((kind, section))
        defaults = tuple((kind, rng.choice(DEFAULT_OWNERS)) for kind in kinds)
        specs.append(
            FleetSpec(
                prefix=f"f{number:0{width}d}",
                seed=rng.randrange(1, 2**31),
                kinds=tuple(kinds),
                nodes=nodes,
                days=days,
                pods_per_node=pods_per_node,
                messiness=Messiness.random(rng),
                distribution=tuple(distribution),
                defaults=defaults,
            )
        )
    return specs


def generate_fleets(
    out_dir: Path,
    specs: list[FleetSpec],
    *,
    start_date: dt.date = dt.date(2026, 10, 1),
    progress: Callable[[str], None] | None = None,
    workers: int | None = None,
) -> dict:
    """Write every fleet of `specs` under `out_dir/landing/<prefix>/` (later deliveries under
    `out_dir/late/<day>/<prefix>/`) and one merged `out_dir/kubeledger.yml`; return a summary
    with one entry per fleet (its spec, the switches that were on and where each
    irregularity went)."""
    prefixes = [spec.prefix for spec in specs]
    if len(set(prefixes)) != len(prefixes) or not all(prefixes):
        raise ValueError("every fleet needs its own non-empty prefix")
    started = time.perf_counter()
    out_dir = Path(out_dir)
    say = progress or (lambda _message: None)
    fresh_output(out_dir)
    used: set[str] = set()
    runs: list[FleetRun] = []
    parts: list[ConfigPart] = []
    fleets = []
    for spec in specs:
        params = Params(
            seed=spec.seed,
            clusters=len(spec.kinds),
            nodes=sum(spec.nodes),
            days=spec.days,
            start_date=start_date,
            billed_through=start_date + dt.timedelta(days=spec.days - 3),
            pods_per_node=spec.pods_per_node,
            messiness=spec.messiness,
            prefix=spec.prefix,
        )
        fleet = build_fleet(
            params, kinds=list(spec.kinds), used_names=used, node_counts_by_cluster=list(spec.nodes)
        )
        run = write_fleet(fleet, out_dir, say, False, workers or os.cpu_count() or 1, spec.prefix)
        runs.append(run)
        by_kind = {c.kind: c.cluster_id for c in fleet.clusters}
        parts.append(
            ConfigPart(
                fleet.clusters,
                spec.messiness,
                distribution={
                    by_kind[kind]: section for kind, section in spec.distribution if section
                },
                defaults={
                    by_kind[kind]: owners for kind, owners in spec.defaults if owners is not None
                },
            )
        )
        summary = run.summary()
        fleets.append(
            {
                "prefix": spec.prefix,
                "seed": spec.seed,
                "days": spec.days,
                "accounts": vars(fleet.accounts),
                "cluster_ids": [c.cluster_id for c in fleet.clusters],
                "messiness": summary["messiness"],
                "irregularities": summary["irregularities"],
                "distribution": parts[-1].distribution,
                "defaults": parts[-1].defaults,
                "clusters": summary["clusters"],
                "overcommitted_node_hours": summary["overcommitted_node_hours"],
                "pod_usage_rows": summary["pod_usage_rows"],
            }
        )
        say(f"fleet {spec.prefix}: {', '.join(c.cluster_id for c in fleet.clusters)}")
    config = write_config(out_dir, parts)
    return {
        "out_dir": str(out_dir),
        "landing": str(out_dir / "landing"),
        "config": str(config),
        "start_date": start_date.isoformat(),
        "fleets": fleets,
        "late_deliveries": late_deliveries(runs),
        "files": sum(sum(run.ctx.files.values()) for run in runs),
        "pod_usage_rows": sum(run.ctx.rows["koku_pod"] for run in runs),
        "seconds": round(time.perf_counter() - started, 2),
    }
