"""A change meant to change no number (speed, storage, refactoring) leaves every mart and the
sealed bill as they were.

`make test-unchanged BASE=<rev>` checks out BASE into a temporary git worktree and, each in a
process of its own (tests/refactor_outputs_driver.py, PYTHONPATH and dbt project at the tree
that runs), loads, builds, closes and seals two generated fleets with BASE's code and with
this tree's:

- `demo`: the fleet `make demo` generates (4 clusters, 40 nodes, 45 days, its late restated
  CUR loaded and built after the first build);
- `bench100`: the 100-node fleet `make bench` generates (30 days from 2026-10-01, 25 pods a
  node).

Every mart both sides have is compared row for row (rows ordered by every column): strings,
dates and decimal money exactly, doubles within 1e-9 (relative, at least absolute), run times
(`loaded_at`, `attributed_at`, `sealed_at`) left out; the sealed bill's tables exactly but for
`sealed_at`. A mart one side lacks fails the test. 4 to 6 minutes; `make test` skips it
(KUBELEDGER_UNCHANGED_BASE unset).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kubeledger.bench.stages import START_DATE
from kubeledger.generate import generate_fleet
from tests.test_refactor_outputs import (
    RUN_METADATA,
    SEALED_TABLES,
    _attached,
    _columns,
    _git,
    _rows,
    _tables,
    built_with,
    checked_out,
    mart_differences,
)

REPO = Path(__file__).resolve().parents[1]
BASE = os.environ.get("KUBELEDGER_UNCHANGED_BASE", "")
FLEETS = {
    "demo": {},
    "bench100": {
        "nodes": 100,
        "days": 30,
        "pods_per_node": 25,
        "clusters": 4,
        "start_date": START_DATE,
    },
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not BASE, reason="4 to 6 minutes: runs with `make test-unchanged BASE=<rev>`"
    ),
]


@pytest.fixture(scope="module")
def base_tree(tmp_path_factory):
    """BASE's code, checked out into a temporary worktree (removed after)."""
    if shutil.which("git") is None:
        pytest.fail("no git on PATH: BASE is checked out with git")
    found = _git("rev-parse", "--verify", "--quiet", f"{BASE}^{{commit}}")
    assert found.returncode == 0, f"no commit {BASE!r} in this repository"
    with checked_out(found.stdout.strip(), tmp_path_factory.mktemp("base")) as tree:
        yield tree


@pytest.fixture(scope="module", params=sorted(FLEETS))
def built(request, base_tree, tmp_path_factory):
    """(fleet name, BASE's work folder, this tree's work folder) for one fleet built by both."""
    root = tmp_path_factory.mktemp(request.param)
    summary = generate_fleet(root / "fleet", **FLEETS[request.param])
    landing, config = root / "fleet" / "landing", root / "fleet" / "kubeledger.yml"
    late = [str(delivery["landing"]) for delivery in summary["late_deliveries"]]
    seconds = {
        side: built_with(tree, root / side, landing, config, late)
        for side, tree in (("base", base_tree), ("head", REPO))
    }
    print(f"\n{request.param}: load+build+close {seconds} s")
    return request.param, root / "base", root / "head"


def test_every_mart_is_unchanged(built):
    fleet, base, head = built
    con = _attached(base, head)
    base_marts, head_marts = _tables(con, "old", "marts"), _tables(con, "new", "marts")
    assert base_marts == head_marts, f"marts on one side only: {base_marts ^ head_marts}"
    assert len(base_marts) >= 20
    problems, rows = [], 0
    for name in sorted(base_marts):
        columns = _columns(con, f"old.marts.{name}")
        if columns != _columns(con, f"new.marts.{name}"):
            problems.append(
                f"{name}: columns {columns} before, {_columns(con, f'new.marts.{name}')} after"
            )
            continue
        compared = {c: kind for c, kind in columns.items() if not c.endswith(RUN_METADATA)}
        differences, compared_rows = mart_differences(con, name, compared)
        problems += differences
        rows += compared_rows
    assert problems == [], fleet
    assert rows > 30_000  # the fleet's pod-days are in it: not an empty comparison
    print(f"\n{fleet}: {len(base_marts)} marts, {rows} rows equal")


def test_the_sealed_bill_is_unchanged(built):
    fleet, base, head = built
    con = _attached(base, head)
    without = ("sealed_at",)
    before = _rows(con, "old", "sealed_bills", "bill_month", exclude=without)
    assert before == _rows(con, "new", "sealed_bills", "bill_month", exclude=without), fleet
    assert len(before[1]) == 1  # October, sealed
    for table, order in SEALED_TABLES.items():
        assert _rows(con, "old", table, order) == _rows(con, "new", table, order), table
