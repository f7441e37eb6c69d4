"""A restated export of a sealed month keeps the billing lines the seal references (SPEC §11):
marked superseded, skipped by staging, traceable to their file and row forever."""

from __future__ import annotations

import shutil
from decimal import Decimal

import duckdb

from kubeledger.close.seal import SCHEMA, seal_month
from kubeledger.close.verify import verify_seals
from kubeledger.load import load_landing
from kubeledger.load.sql import BILLING_LINE_ID_SQL
from tests.test_load_restatements import CUR, SAMPLES, restated_cur, sample_lines, write
from tests.test_seal import AS_OF, MONTH, SOURCES, balanced_bill, write_bill

CURRENT = "_superseded_at is null"
COST = '"lineItem/UnblendedCost"::decimal(20, 10)'


def seal_october_on_the_cur(con: duckdb.DuckDBPyConnection) -> None:
    """Seal October with every loaded CUR row as a billing line of c1's compute slice."""
    write_bill(con, *balanced_bill())
    con.execute(
        f"""
        create or replace table work.billing as
        select {BILLING_LINE_ID_SQL} as billing_line_id, 'c1' as cluster_id,
            date '2026-10-06' as charge_date, 'compute' as cost_family,
            'instance' as resource_type, 'i-1' as resource_key, 'matched' as scope_status,
            cast({COST} as decimal(38, 10)) as effective_cost, 'aws' as provider,
            'acct' as billing_account_id
        from raw.aws_cur_legacy
        """
    )
    seal_month(con, MONTH, SOURCES, as_of=AS_OF)


def dangling_references(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute(
        f"""
        select count(*) from {SCHEMA}.sealed_billing_line_refs as refs
        where (
            select count(*) from raw.aws_cur_legacy
            where {BILLING_LINE_ID_SQL} = refs.billing_line_id
        ) <> 1
        """
    ).fetchone()[0]


def test_restating_a_sealed_month_keeps_every_referenced_line_marked_superseded(tmp_path):
    landing = tmp_path / "landing"
    (landing / "aws").mkdir(parents=True)
    shutil.copy(SAMPLES / CUR, landing / CUR)
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    load_landing(con, landing)
    seal_october_on_the_cur(con)
    assert con.execute(f"select count(*) from {SCHEMA}.sealed_billing_line_refs").fetchone() == (5,)

    write(landing / "aws" / "cur-legacy-2026-10-restated.csv", restated_cur(sample_lines(CUR)))
    lines: list[str] = []
    load_landing(con, landing, progress=lines.append)

    assert lines[-1] == (
        "replaced 5 rows of 1 earlier file in raw.aws_cur_legacy (restated billing periods); "
        "kept 5 of them, marked superseded: a sealed bill references them"
    )
    # What staging reads is exactly the restatement, as without a seal (3 rows, 12.924).
    assert con.execute(
        f"select count(*), sum({COST}) from raw.aws_cur_legacy where {CURRENT}"
    ).fetchone() == (3, Decimal("12.9240000000"))
    # The sealed lines are all still there, each traceable to its file and row.
    assert dangling_references(con) == 0
    assert con.execute(
        "select _source_file, min(_row_number), max(_row_number), count(*) "
        "from raw.aws_cur_legacy where not " + CURRENT + " group by 1"
    ).fetchall() == [("aws/cur-legacy-2026-10.csv", 1, 5, 5)]

    # A second restatement never deletes the superseded rows either.
    again = restated_cur(sample_lines(CUR))
    again[1] = again[1].replace(",0.2000000000,", ",0.2100000000,")
    write(landing / "aws" / "cur-legacy-2026-10-restated-2.csv", again)
    load_landing(con, landing)
    assert dangling_references(con) == 0
    assert con.execute(f"select count(*) from raw.aws_cur_legacy where {CURRENT}").fetchone() == (
        3,
    )
    assert con.execute("select count(*) from raw.aws_cur_legacy").fetchone() == (8,)
    assert verify_seals(con).ok
    con.close()


def test_without_a_seal_a_restatement_still_deletes_what_it_replaces(tmp_path):
    landing = tmp_path / "landing"
    (landing / "aws").mkdir(parents=True)
    shutil.copy(SAMPLES / CUR, landing / CUR)
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    load_landing(con, landing)
    write(landing / "aws" / "cur-legacy-2026-10-restated.csv", restated_cur(sample_lines(CUR)))
    load_landing(con, landing)
    assert con.execute("select count(*) from raw.aws_cur_legacy").fetchone() == (3,)
    con.close()
