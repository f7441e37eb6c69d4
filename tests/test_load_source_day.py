"""Every usage report row gets `_source_day` at load: the date its `interval_start` text starts
with, else the UTC date it reads as; a warehouse an older version loaded gets it when it is next
opened. A day's run prunes raw rows by it (tests/test_day_run_data_tests.py checks the rows)."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from kubeledger.load import ensure_raw_schema, load_landing

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples" / "koku"
USAGE_TABLES = (
    "koku_pod_usage",
    "koku_storage_usage",
    "koku_node_labels",
    "koku_namespace_labels",
    "koku_gpu_usage",
)
# interval_start as written -> the day kept: the text's own date, whatever the offset
SPELLINGS = {
    "2026-10-06 18:00:00 +0000 UTC": dt.date(2026, 10, 6),
    "2026-10-07 01:00:00 +0200 CEST": dt.date(2026, 10, 7),  # 23:00 UTC on the 6th
    "2026-10-05 22:00:00 -0400 EDT": dt.date(2026, 10, 5),  # 02:00 UTC on the 6th
    "2026-10-06T18:00:00Z": dt.date(2026, 10, 6),
}


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    yield connection
    connection.close()


def _landing(tmp_path: Path) -> Path:
    landing = tmp_path / "landing" / "koku"
    landing.mkdir(parents=True)
    for name in ("manifest.json", "storage-usage.csv", "node-labels.csv"):
        shutil.copy(SAMPLES / name, landing / name)
    for name in ("namespace-labels.csv", "gpu-usage.csv"):
        shutil.copy(SAMPLES / name, landing / name)
    header, *rows = (SAMPLES / "pod-usage.csv").read_text().splitlines()
    spelled = [
        row.replace("2026-10-06 18:00:00 +0000 UTC", spelling, 1)
        for row, spelling in zip(rows, SPELLINGS, strict=False)
    ]
    assert len(spelled) == len(SPELLINGS)
    (landing / "pod-usage.csv").write_text("\n".join([header, *spelled]) + "\n")
    return landing.parent


def test_each_usage_row_keeps_the_day_its_hour_is_written_on(con, tmp_path):
    load_landing(con, _landing(tmp_path))
    kept = dict(
        con.execute("select interval_start, _source_day from raw.koku_pod_usage").fetchall()
    )
    assert kept == SPELLINGS
    for table in USAGE_TABLES:
        missing = con.execute(f"select count(*), count(_source_day) from raw.{table}").fetchone()
        assert missing[0] > 0 and missing[0] == missing[1], table


def test_rows_an_older_version_loaded_get_their_day_when_the_warehouse_is_opened(con, tmp_path):
    load_landing(con, _landing(tmp_path))
    loaded = {
        table: con.execute(f"select * from raw.{table} order by all").fetchall()
        for table in USAGE_TABLES
    }
    for table in USAGE_TABLES:  # as an older version left it: no such column
        con.execute(f"alter table raw.{table} drop column _source_day")
    ensure_raw_schema(con)
    for table in USAGE_TABLES:
        assert (
            con.execute(f"select * from raw.{table} order by all").fetchall() == (loaded[table])
        ), table
