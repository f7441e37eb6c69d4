"""Retention keeps what a re-run needs (SPEC §11, issue 12 §1.11).

As of 2027-01-02 with retention 90 days and re-runs 92 days back, the re-run window starts on
2026-10-02 (92 days back) and retention would prune everything charged before 2026-10-04
(90 days back). Rows of 2026-10-02 and 10-03 are past retention but a backfill of those days
reads them again, so they stay: the Google commitment fee included, which is not a scope line
and so is never referenced by a seal.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from kubeledger.dagster.retention import prune_raw_billing
from kubeledger.load import ensure_raw_schema

AS_OF = dt.date(2027, 1, 2)


def _gcp_row(connection, row: int, start: str, end: str, sku: str) -> None:
    connection.execute(
        "insert into raw.gcp_billing_export (usage_start_time, usage_end_time, sku_description, "
        "cost, _source_file, _row_number) values (?, ?, ?, '1.00', 'gcp/2026-10/export.jsonl', ?)",
        [start, end, sku, row],
    )


@pytest.fixture
def con():
    connection = duckdb.connect()
    ensure_raw_schema(connection)
    # 2026-10-01 (outside the window), 10-02 and 10-03 (inside it, past retention), 10-05
    # (inside retention): a commitment fee and an instance line each.
    for row, day in enumerate(("2026-10-01", "2026-10-02", "2026-10-03", "2026-10-05")):
        following = (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()
        start, end = f"{day} 00:00:00 UTC", f"{following} 00:00:00 UTC"
        fee = "Commitment v1: Cores in us-central1 for 1 Year"
        _gcp_row(connection, 2 * row + 1, start, end, fee)
        _gcp_row(connection, 2 * row + 2, start, end, "N2 Instance Core running in Americas")
    # an account-level row spanning September: charged before the window, ends before it
    _gcp_row(connection, 20, "2026-09-01 00:00:00 UTC", "2026-10-01 00:00:00 UTC", "Tax")
    # one spanning October: charged before the window but its period reaches into it
    _gcp_row(connection, 21, "2026-10-01 00:00:00 UTC", "2026-11-01 00:00:00 UTC", "Tax")
    yield connection
    connection.close()


def _rows(con) -> list[tuple[int, str]]:
    return con.execute(
        "select _row_number, left(usage_start_time, 10) from raw.gcp_billing_export order by 1"
    ).fetchall()


def test_retention_keeps_every_row_a_day_of_the_rerun_window_needs(con):
    # the default re-run window is 92 days
    results = {result.raw_table: result for result in prune_raw_billing(con, AS_OF, 90)}

    assert _rows(con) == [
        (3, "2026-10-02"),
        (4, "2026-10-02"),
        (5, "2026-10-03"),
        (6, "2026-10-03"),
        (7, "2026-10-05"),
        (8, "2026-10-05"),
        (21, "2026-10-01"),
    ]
    gcp = results["gcp_billing_export"]
    # pruned: Oct 1's fee and instance line, September's tax; kept past retention: 4 + 1
    assert (gcp.rows_pruned, gcp.rows_kept_for_seals, gcp.rows_kept_for_reruns) == (3, 0, 5)


def test_a_shorter_rerun_window_lets_retention_prune_down_to_90_days(con):
    prune_raw_billing(con, AS_OF, 90, 30)

    assert _rows(con) == [(7, "2026-10-05"), (8, "2026-10-05")]
