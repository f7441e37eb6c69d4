"""A quarantined row keeps what of it reads: the cluster and day it would have fed and its
billing account, so data health counts it there (and once, however many values fail)."""

from __future__ import annotations

import datetime as dt

import duckdb

from kubeledger.load import load_landing
from tests.test_load_restatements import CUR, POD, land, sample_lines, write


def test_a_quarantined_row_keeps_its_cluster_day_and_account(tmp_path):
    landing = land(tmp_path / "landing", "koku/manifest.json")
    header, first, *rest = sample_lines(POD)
    # two unreadable values in one usage row: two quarantine entries, one row
    broken = first.replace(",1800.000000,3600.000000,", ",lots,3600.000000,").replace(
        ",4.000000,14400.000000,", ",4.000000,n/a,"
    )
    write(landing / "koku" / "pod-usage.csv", [header, broken, *rest])
    # a billing line (file line 4: data row 3) whose cost does not read: its day and payer
    # account still do
    write(
        landing / "aws" / "cur.csv",
        [
            line.replace(",0.0800000000,0.0109589041,", ",0.0800000000,n/a,")
            for line in sample_lines(CUR)
        ],
    )
    # a usage row whose day does not read: only its cluster does
    write(
        landing / "koku" / "pod-usage-2.csv",
        [
            header,
            rest[0].replace(
                "2026-10-06 18:00:00 +0000 UTC,2026-10-06 18:59", "soon,2026-10-06 18:59"
            ),
        ],
    )
    with duckdb.connect() as con:
        load_landing(con, landing)
        rows = con.execute(
            "select _source_file, _row_number, column_name, _cluster_id, usage_date, "
            "billing_account_id from raw.quarantine order by 1, 2, 3"
        ).fetchall()
    day = dt.date(2026, 10, 6)
    assert rows == [
        ("aws/cur.csv", 3, "lineItem/UnblendedCost", None, day, "123456789012"),
        ("koku/pod-usage-2.csv", 1, "interval_start", "prod-east-1", None, None),
        ("koku/pod-usage.csv", 1, "node_capacity_cpu_core_seconds", "prod-east-1", day, None),
        ("koku/pod-usage.csv", 1, "pod_usage_cpu_core_seconds", "prod-east-1", day, None),
    ]
