"""The monthly close asset: blocked → not sealed and the run says why; sealed at the deadline.

The close runs on the close tests' scratch project (close models over mock inputs, see
test_close_support.py), so only the close models are built.
"""

from __future__ import annotations

import duckdb
import pytest

from tests.test_close_support import (  # noqa: F401
    add_cluster,
    add_month,
    close_project,
    new_warehouse,
)
from tests.test_dagster_support import step_failures

MONTH_KEY = "2026-10-01"
# c1 is billed 10.00 a day against 3.00 estimated (factor 3.3, fine); c9 is billed 6.00 a day
# against 1.00 estimated: factor 6 is outside [0.2, 5], so c9 blocks until the deadline.
CLUSTERS = {
    "c1": {"daily_costs": {"cc-a": 1.0, "cc-b": 1.0, "cc-c": 1.0}, "daily_invoice": 10.0},
    "c9": {"daily_costs": {"cc-x": 0.5, "cc-y": 0.5}, "daily_invoice": 6.0},
}


@pytest.fixture
def close_warehouse(tmp_path, close_project, monkeypatch):  # noqa: F811
    db = new_warehouse(tmp_path / "close.duckdb")
    with duckdb.connect(str(db)) as con:
        for cluster, month in CLUSTERS.items():
            add_cluster(con, cluster)
            add_month(con, cluster, "2026-10", **month)
    monkeypatch.setenv("DBT_PROJECT_DIR", str(close_project.project_dir))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(close_project.profiles_dir))
    # the scratch project's artifacts stay with it: in the worker's target folder its manifest
    # would be the one the next test's Dagster code location loads (keys without a schema)
    monkeypatch.setenv("DBT_TARGET_PATH", str(close_project.target_path))
    return db


def _close(db, as_of: str):
    from dagster import materialize

    from kubeledger.dagster.assets_close import monthly_close
    from kubeledger.dagster.resources import WarehouseResource

    return materialize(
        [monthly_close],
        partition_key=MONTH_KEY,
        resources={"warehouse": WarehouseResource(db_path=str(db), as_of=as_of)},
        raise_on_error=False,
    )


def _bills(db) -> list[tuple]:
    with duckdb.connect(str(db)) as con:
        exists = con.execute(
            "select count(*) from information_schema.tables where table_schema = 'sealed' "
            "and table_name = 'sealed_bills'"
        ).fetchone()[0]
        if not exists:
            return []
        return con.execute(
            "select bill_month, bill_status, estimated_clusters, billed_cost "
            "from sealed.sealed_bills"
        ).fetchall()


def test_a_blocked_month_is_retried_until_the_deadline_then_sealed_partial(close_warehouse):
    # before the grace window ends (Oct 31 + 4 days): refused, nothing sealed
    early = _close(close_warehouse, "2026-11-03")
    assert not early.success
    assert "waiting_for_grace_window" in step_failures(early)["monthly_close"]

    # the daily retry inside the window: c9 blocks the close
    blocked = _close(close_warehouse, "2026-11-09")
    assert not blocked.success
    message = step_failures(blocked)["monthly_close"]
    assert "close of 2026-10 as of 2026-11-09: blocked" in message
    assert "c9 compute: factor_out_of_bounds (factor 6.0000 outside [0.2, 5]" in message
    assert _bills(close_warehouse) == []

    # at the deadline (Oct 31 + 10 days) c9 falls back to its estimate: partial
    deadline = _close(close_warehouse, "2026-11-10")
    assert deadline.success
    (materialization,) = deadline.asset_materializations_for_node("monthly_close")
    assert materialization.metadata["bill_status"].value == "partial"
    assert materialization.metadata["estimated_clusters"].value == "c9"
    # 31 days x 10.00 invoiced for c1 + 31 days x 1.00 estimated for c9
    (bill,) = _bills(close_warehouse)
    assert bill[:3] == ("2026-10", "partial", "c9")
    assert str(bill[3]) == "341.000"  # bill money: decimal(38, 3)

    # the next daily attempt finds it sealed and leaves it alone
    again = _close(close_warehouse, "2026-11-11")
    assert again.success
    (materialization,) = again.asset_materializations_for_node("monthly_close")
    assert materialization.metadata["outcome"].value == '{"2026-10": "already_sealed"}'
    assert len(_bills(close_warehouse)) == 1

    # someone edits a sealed line: the next close attempt fails naming it, and never heals
    with duckdb.connect(str(close_warehouse)) as con:
        con.execute(
            "update sealed.sealed_bill_lines set billed_cost = billed_cost + 1 "
            "where line_id = 'c1|compute|cc-a'"
        )
    tampered = _close(close_warehouse, "2026-11-12")
    assert not tampered.success
    message = step_failures(tampered)["monthly_close"]
    assert "close of 2026-10: the sealed month fails verification" in message
    assert "slice c1/compute, line c1|compute|cc-a: billed_cost is" in message
