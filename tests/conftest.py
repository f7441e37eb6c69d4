"""Test-session setup shared by every test file.

`make test` runs the suite on two pytest-xdist workers (one per core), a test file per worker
at a time (`--dist loadfile`, so a file's module fixtures are built once). Each worker is its
own process with its own dbt target and log folders: dbt writes `manifest.json`,
`run_results.json` and `partial_parse.msgpack` there on every command, and two writers of one
folder would read each other's half-written files. The files with the longest fixtures go to
the workers first, so neither worker is left with a long file at the end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Longest first (seconds on 2 cores, measured): the rest keep their collection order.
LONG_FILES = (
    "test_differential.py",
    "test_faults.py",
    "test_spark_parity.py",
    "test_demo_fleet.py",
    "test_quality_gate.py",
    "test_exchange_rates.py",
    "test_worked_example.py",
)


def _worker_folders() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    scratch = ROOT / "target" / "xdist" / worker
    os.environ.setdefault("DBT_TARGET_PATH", str(scratch / "target"))
    os.environ.setdefault("DBT_LOG_PATH", str(scratch / "logs"))


_worker_folders()


@pytest.fixture(scope="session", autouse=True)
def _great_expectations_imported_once() -> None:
    """The quality gate runs its suites in a forked child of the build (quality_gate.py),
    which imports Great Expectations (about 4 s) unless its parent already has: a test worker
    imports it once, so each gate a test runs in-process forks with it loaded. The gate's code
    is the same either way; a fresh process (the CLI's) imports it in its gate's child."""
    from kubeledger.quality.validate import import_great_expectations

    import_great_expectations()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: position for position, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))
