"""Retention: raw billing rows past 90 days are pruned, except the lines a seal references."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from tests.test_dagster_support import query, tiny_fleet

PER_DAY = "select cast(line_item_usage_start_date as date), count(*) from raw.aws_cur2 group by 1"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """The tiny fleet's landing loaded; billing covers 2026-10-01 and 2026-10-02."""
    from kubeledger.load import load_landing

    folder = tiny_fleet(tmp_path_factory.mktemp("retention_fleet"))
    db = folder / "kubeledger.duckdb"
    load_landing(db, folder / "landing")
    return db


def test_prune_keeps_sealed_lines_and_rows_inside_retention(loaded, monkeypatch):
    from kubeledger.dagster.retention import prune_raw_billing
    from kubeledger.warehouse import run_dbt

    monkeypatch.setenv("KUBELEDGER_DB", str(loaded))
    run_dbt(["run", "--quiet", "--select", "stg_aws__cur2_billing_lines"], db_path=loaded)
    day_one = query(
        loaded,
        "select billing_line_id from staging.stg_aws__cur2_billing_lines "
        "where charge_date = date '2026-10-01' order by source_row_number",
    )
    assert len(day_one) > 1
    sealed_id = day_one[0][0]
    counts = dict(
        query(
            loaded,
            PER_DAY,
        )
    )
    with duckdb.connect(str(loaded)) as con:
        con.execute("create schema sealed")
        con.execute(
            "create table sealed.sealed_billing_line_refs "
            "(bill_id varchar, billing_line_id varchar)"
        )
        con.execute(
            "insert into sealed.sealed_billing_line_refs values ('bill-2026-10', ?)", [sealed_id]
        )
        # 90 days before 2026-12-31 is 2026-10-02: the 1st is past retention, the 2nd is not
        results = {r.raw_table: r for r in prune_raw_billing(con, dt.date(2026, 12, 31), 90)}

    aws = results["aws_cur2"]
    assert (aws.rows_pruned, aws.rows_kept_for_seals) == (counts[dt.date(2026, 10, 1)] - 1, 1)
    assert dict(
        query(
            loaded,
            PER_DAY,
        )
    ) == {dt.date(2026, 10, 1): 1, dt.date(2026, 10, 2): counts[dt.date(2026, 10, 2)]}
    # the kept raw row is the sealed line: staging still gives it the same ID
    assert query(
        loaded,
        "select billing_line_id from staging.stg_aws__cur2_billing_lines "
        "where charge_date = date '2026-10-01'",
    ) == [(sealed_id,)]
    assert results["gcp_billing_export"].rows_kept_for_seals == 0
    assert query(
        loaded,
        "select count(*) from raw.gcp_billing_export "
        "where cast(usage_start_time as date) = date '2026-10-01'",
    ) == [(0,)]
