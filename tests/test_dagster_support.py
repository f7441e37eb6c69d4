"""Shared helpers for the Dagster tests (no tests of its own).

The code location reads its partitions' first day from the environment when it is imported,
so the tests fix it (2026-06-01) before anything imports `kubeledger.dagster`; every test
passes its own as-of date, so the tests mean the same whatever today is.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import duckdb

os.environ.setdefault("KUBELEDGER_PARTITIONS_START", "2026-06-01")

FLEET_START = dt.date(2026, 10, 1)
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def tiny_fleet(out_dir: Path, *, days: int = 4) -> Path:
    """Two clusters (EKS, GKE), six nodes, `days` days from 2026-10-01; returns out_dir."""
    from kubeledger.generate import Messiness, generate_fleet

    # Tidy: these tests are about partitions, sensors and jobs on a few days (most of the
    # irregularities need a whole month); the messy fleet is tests/test_differential.py's.
    generate_fleet(
        out_dir,
        seed=7,
        clusters=2,
        nodes=6,
        days=days,
        start_date=FLEET_START,
        pods_per_node=4,
        messiness=Messiness.none(),
    )
    return out_dir


def warehouse(out_dir: Path, as_of: str, **overrides: Any):
    """The warehouse resource of a fleet folder: its DuckDB file, config and landing."""
    from kubeledger.dagster.resources import WarehouseResource

    fields = {
        "db_path": str(out_dir / "kubeledger.duckdb"),
        "config_path": str(out_dir / "kubeledger.yml"),
        "landing_dir": str(out_dir / "landing"),
        "as_of": as_of,
        **overrides,
    }
    return WarehouseResource(**fields)


def range_tags(first: str, last: str, **extra: str) -> dict[str, str]:
    return {RANGE_START_TAG: first, RANGE_END_TAG: last, **extra}


def query(db: Path | str, sql: str, params: list[Any] | None = None) -> list[tuple]:
    with duckdb.connect(str(db)) as con:
        return con.execute(sql, params or []).fetchall()


def step_failures(result) -> dict[str, str]:
    """Step key -> failure message of an in-process run."""
    failures = {}
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE":
            error = event.event_specific_data.error
            failures[event.step_key] = (error.message if error else "") + "".join(
                cause.message for cause in _causes(error)
            )
    return failures


def _causes(error) -> list:
    causes = []
    while error is not None and error.cause is not None:
        causes.append(error.cause)
        error = error.cause
    return causes


def started_steps(result) -> set[str]:
    return {e.step_key for e in result.all_events if e.event_type_value == "STEP_START"}


def usage_report(landing: Path, cluster: str, day: dt.date, report: int = 0) -> Path:
    """The operator's report file `report` (0 pod, 1 storage, ...) of a cluster and day."""
    (path,) = (landing / "usage" / cluster / day.isoformat()).glob(f"*_report.{report}.csv")
    return path
