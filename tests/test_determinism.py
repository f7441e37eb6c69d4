"""The same inputs give the same bills, byte for byte, whatever DuckDB's thread count (SPEC §1.3).

One small generated fleet is loaded once and built and closed twice, with 1 and with 4 DuckDB
threads (KUBELEDGER_DUCKDB_THREADS). A double sum in a parallel aggregate depends on the order
the threads add rows in, so its last bits change with the thread count, and a bill summed
from such figures moves a cent when one lands on a rounding boundary. Money bound for a bill
is summed exactly, so the sealed lines (estimates, exact shares, billed amounts) and the daily
owner costs they are summed from are identical to the last bit.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml

from kubeledger.close.closer import close_month
from kubeledger.config import load_config
from kubeledger.generate import generate_fleet
from kubeledger.load import load_landing
from kubeledger.warehouse import prepare_warehouse, run_dbt

MONEY_COLUMNS = [
    "direct_cost",
    "workload_idle_cost",
    "platform_share_cost",
    "infrastructure_idle_share_cost",
    "workload_idle_share_cost",
    "unattributed_storage_share_cost",
    "unattributed_network_share_cost",
    "unallocated_cost",
    "total_cost",
]


def _exact(value: object) -> object:
    return value.hex() if isinstance(value, float) else value


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [tuple(_exact(value) for value in row) for row in con.execute(sql).fetchall()]


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("determinism")
    generate_fleet(root, clusters=3, nodes=8, days=33, pods_per_node=10)
    config_path = root / "kubeledger.yml"
    # the proportional preset spreads every pool by weights: the most sums on the way to a bill
    config = yaml.safe_load(config_path.read_text())
    config["distribution"] = {"preset": "proportional"}
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    os.environ["KUBELEDGER_CONFIG"] = str(config_path)
    loaded = root / "loaded.duckdb"
    prepare_warehouse(loaded, load_config(config_path))
    load_landing(loaded, root / "landing")
    previous = os.environ.get("KUBELEDGER_DUCKDB_THREADS")
    dbs = {}
    try:
        for threads in (1, 4):
            db = root / f"threads-{threads}.duckdb"
            shutil.copy(loaded, db)
            os.environ["KUBELEDGER_DUCKDB_THREADS"] = str(threads)
            run_dbt(["build", "--exclude", "resource_type:unit_test"], db_path=db)
            close_month(db, "2026-10", dt.date(2026, 11, 19))
            dbs[threads] = db
    finally:
        if previous is None:
            os.environ.pop("KUBELEDGER_DUCKDB_THREADS", None)
        else:
            os.environ["KUBELEDGER_DUCKDB_THREADS"] = previous
    return dbs


def test_sealed_bill_lines_are_identical(builds):
    sql = """select line_id, estimated_cost, allocation_estimate, exact_share,
                    rounded_down_cost, is_carry_cent, billed_cost
             from sealed.sealed_bill_lines order by line_id"""
    lines = _rows(builds[1], sql)
    assert len(lines) > 10
    assert _rows(builds[4], sql) == lines


def test_daily_owner_costs_are_identical_to_the_last_bit(builds):
    sql = f"""select cluster_id, usage_date, cost_family, team, cost_center, application,
                     owner_status, {", ".join(MONEY_COLUMNS)}
              from marts.fct_owner_costs_daily order by all"""
    rows = _rows(builds[1], sql)
    assert len(rows) > 100
    assert _rows(builds[4], sql) == rows
