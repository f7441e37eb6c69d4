"""The differential test (issue 12 §3): many random messy fleets, the ledger against the
independent reference ledger (tests/reference/, written from the SPEC alone).

N fleets (`KUBELEDGER_DIFF_FLEETS`, default 50) drawn by `random_fleet_specs` from
`KUBELEDGER_DIFF_SEED` go into one landing folder and one merged kubeledger.yml, and take the
`kubeledger demo` path: load landing/, build, load each later delivery (the restated CUR) and
build, close October as of a fixed day. One dbt build per
step for the whole set: a build costs about the same whatever its size. The reference then
reads the same files, and every node-, pod-, cluster- and owner-day and every October bill
line must agree (bill money exactly, daily doubles within 1e-6; compare_to_warehouse).

`KUBELEDGER_DIFF_BATCHES` (default 1) repeats the whole test on that many sets of N fleets,
batch b drawn from seed + b, each in a warehouse of its own that is deleted once its batch
is checked: `make test-differential` runs 10 batches of 50 (500 fleets) without one 20 GB
load. Batch 0 is the set `make test` runs.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from kubeledger.generate import Messiness, generate_fleets, random_fleet_specs
from tests.reference import reference_ledger
from tests.reference.compare import compare_to_warehouse
from tests.warehouse_builder import build_warehouse, close_month, late_folders

FLEETS = int(os.environ.get("KUBELEDGER_DIFF_FLEETS", "50"))
SEED = int(os.environ.get("KUBELEDGER_DIFF_SEED", "20261012"))
BATCHES = int(os.environ.get("KUBELEDGER_DIFF_BATCHES", "1"))
MONTH, MONTH_START = "2026-10", dt.date(2026, 10, 1)
AS_OF = dt.date(2026, 11, 19)  # the Makefile's demo AS_OF: past the grace, before the deadline
CLOUD_KINDS = ("eks", "gke", "aks", "onprem")
SHOWN = 40

pytestmark = pytest.mark.slow

# Small fleets: 35 days from Oct 1 cover October and its late delivery; 2-4 nodes per
# cluster and the fewest pods per node the generator allows keep 50 fleets inside `make test`.
SPEC_SIZE = {"days": 35, "min_nodes": 2, "max_nodes": 4, "pods_per_node": 4}

# A Messiness switch is exercised when it is on and the irregularity found a place in the
# fleet (the generator skips what does not fit: no AKS cluster for the shared LB, ...): the
# summary's `irregularities` entry that records where it went.
PLACED_BY = {
    "shared_load_balancer": ("shared_load_balancer",),
    "scale_to_zero_weekend": ("scale_to_zero",),
    "decommissioned_cluster": ("decommissioned",),
    "autoscaled_unbilled_nodes": ("autoscaled_nodes",),
    "restated_cur": ("restated_month",),
    "bill_days_without_usage": ("outage", "silent_node"),
    "gpu_pools": ("gpu_nodes",),
    "released_volume": ("released_volume",),
}


@pytest.fixture(scope="module", params=range(BATCHES), ids=lambda batch: f"batch{batch}")
def differential(request, tmp_path_factory):
    seed = SEED + request.param
    root = tmp_path_factory.mktemp(f"differential{request.param}")
    specs = random_fleet_specs(FLEETS, random.Random(seed), **SPEC_SIZE)
    summary = generate_fleets(root / "fleets", specs)
    config = Path(summary["config"])
    db = build_warehouse(root, Path(summary["landing"]), config, late=summary["late_deliveries"])
    close_month(db, MONTH, AS_OF)
    # the same folders, in the same load order: landing/, then each later delivery
    ledger = reference_ledger(
        Path(summary["landing"]), config, as_of=AS_OF, deliveries=late_folders(summary)
    )
    yield specs, summary, db, ledger, seed
    if BATCHES > 1:  # a batch's landing files and warehouse are gigabytes
        shutil.rmtree(root, ignore_errors=True)


def test_the_fleets_cover_every_cloud_and_every_irregularity(differential):
    specs, summary, _, _, _ = differential
    assert len(summary["fleets"]) == FLEETS
    kinds = {kind for spec in specs for kind in spec.kinds}
    assert kinds == set(CLOUD_KINDS)
    exercised = set()
    for spec, fleet in zip(specs, summary["fleets"], strict=True):
        for switch in spec.messiness.on():
            places = PLACED_BY.get(switch)
            if switch == "real_eks_fee_rows":
                if "eks" in spec.kinds:
                    exercised.add(switch)
            elif places is None or any(fleet["irregularities"].get(p) for p in places):
                exercised.add(switch)
    assert exercised == set(Messiness.all().on())
    # both shapes of a bill day without usage: a cluster-day outage and a silent node
    for place in PLACED_BY["bill_days_without_usage"]:
        assert any(fleet["irregularities"].get(place) for fleet in summary["fleets"]), place
    assert summary["late_deliveries"], "no restated CUR delivered later"


def test_the_ledger_equals_the_reference(differential):
    _, _, db, ledger, seed = differential
    disagreements = compare_to_warehouse(ledger, db, months=[MONTH_START])
    assert not disagreements, describe(disagreements, seed)


def describe(disagreements: list[str], seed: int) -> str:
    """The first SHOWN disagreements, grouped by table (the text before the first colon)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for text in disagreements:
        groups[text.split(":", 1)[0]].append(text)
    lines = [
        f"{len(disagreements)} disagreements with the reference ledger (seed {seed}, "
        f"{FLEETS} fleets):"
    ]
    shown = 0
    for table, texts in groups.items():
        lines.append(f"[{table}] {len(texts)}")
        for text in texts:
            if shown == SHOWN:
                break
            lines.append(f"  {text}")
            shown += 1
    return "\n".join(lines)
