"""Tamper-evident seals (SPEC §9): hashes chained month to month, a write-once copy outside
the warehouse, and `verify` naming the month, slice and line of any difference."""

from __future__ import annotations

import datetime as dt
import json
import stat
from decimal import Decimal

import duckdb
import pytest

from kubeledger.close import bill as bills
from kubeledger.close.digest import copy_root
from kubeledger.close.seal import SCHEMA, seal_correction, seal_month
from kubeledger.close.verify import verify_seals
from tests.test_seal import AS_OF, MONTH, SOURCES, balanced_bill, line_row, slice_row, write_bill

NOVEMBER = "2026-11"


def november_bill() -> tuple[list[dict], list[dict]]:
    slices = [slice_row("c1", "50.00") | {"bill_month": NOVEMBER}]
    lines = [
        line_row("c1", "cc-a", "25.00") | {"bill_month": NOVEMBER},
        line_row("c1", "cc-b", "25.00") | {"bill_month": NOVEMBER},
    ]
    return slices, lines


@pytest.fixture
def sealed(tmp_path):
    """A warehouse with October and November sealed, in that order."""
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    write_bill(con, *balanced_bill())
    seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    write_bill(con, *november_bill())
    seal_month(con, NOVEMBER, SOURCES, as_of=AS_OF + dt.timedelta(days=30))
    yield con
    con.close()


def problems(con, month=None) -> list[str]:
    return verify_seals(con, month).problems


def test_a_sealed_warehouse_verifies_and_its_copy_is_read_only_and_chained(sealed):
    report = verify_seals(sealed)
    assert report.ok, report.problems
    assert report.months == [MONTH, NOVEMBER]
    digests = sealed.execute(
        f"select artifact_id, previous_chain_hash, chain_hash, copy_path "
        f"from {SCHEMA}.seal_digests order by sequence_number"
    ).fetchall()
    october, november = digests
    assert october[1] is None and november[1] == october[2]  # November chains to October
    root = copy_root(sealed)
    assert root.name == "ledger.duckdb.seals"
    folder = root.parent / october[3]
    assert sorted(path.name for path in folder.iterdir()) == [
        "SHA256SUMS",
        "bill.parquet",
        "billing_line_refs.parquet",
        "lines.parquet",
        "manifest.json",
        "slices.parquet",
    ]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["tables"]["sealed_bill_lines"]["rows"] == 6
    assert manifest["tables"]["sealed_billing_line_refs"]["rows"] == 2
    for path in [folder, *folder.iterdir()]:
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def test_an_updated_line_is_named_by_month_slice_and_line(sealed):
    sealed.execute(
        f"update {SCHEMA}.sealed_bill_lines set billed_cost = 34.34 "
        "where line_id = 'c1|compute|cc-a' and bill_month = '2026-10'"
    )
    found = problems(sealed)
    assert any(
        "2026-10 bill-2026-10-" in p
        and "slice c1/compute, line c1|compute|cc-a" in p
        and "billed_cost is 34.34 in the warehouse, 33.34 as sealed" in p
        for p in found
    ), found
    assert "2026-10: slice c1/compute: lines sum to 101.00, target 100.00" in found
    assert problems(sealed, NOVEMBER) == []  # November's own seal is intact


def test_a_sum_preserving_move_of_one_dollar_inside_a_slice_is_caught(sealed):
    sealed.execute(
        f"update {SCHEMA}.sealed_bill_lines set billed_cost = billed_cost + 1 "
        "where line_id = 'c1|compute|cc-b'"
    )
    sealed.execute(
        f"update {SCHEMA}.sealed_bill_lines set billed_cost = billed_cost - 1 "
        "where line_id = 'c1|compute|cc-c'"
    )
    found = problems(sealed, MONTH)
    assert not any("lines sum to" in p for p in found)  # the sums still balance
    assert any(
        "line c1|compute|cc-b: billed_cost is 34.33 in the warehouse, 33.33" in p for p in found
    )
    assert any(
        "line c1|compute|cc-c: billed_cost is 32.33 in the warehouse, 33.33" in p for p in found
    )


def test_an_inserted_line_is_caught(sealed):
    sealed.execute(
        f"insert into {SCHEMA}.sealed_bill_lines select * replace ("
        "'c1|compute|cc-z' as line_id, 'cc-z' as line_key, 0.00 as billed_cost) "
        f"from {SCHEMA}.sealed_bill_lines where line_id = 'c1|compute|cc-a'"
    )
    found = problems(sealed)
    assert any(
        "line c1|compute|cc-z: in the warehouse, but not in the seal (inserted)" in p for p in found
    ), found


def test_a_deleted_billing_line_reference_is_caught(sealed):
    sealed.execute(f"delete from {SCHEMA}.sealed_billing_line_refs where billing_line_id = 'bl-2'")
    found = problems(sealed)
    assert any(
        "slice c1/compute, billing line bl-2: sealed, but missing in the warehouse" in p
        for p in found
    ), found


def test_a_table_dropped_and_recreated_is_caught(sealed):
    # Same rows, one changed, and without the constraints the seal created.
    sealed.execute(
        f"create table work.saved as select * replace ("
        "case when line_id = 'c1|compute|cc-a' then 3.34 else billed_cost end as billed_cost) "
        f"from {SCHEMA}.sealed_bill_lines"
    )
    sealed.execute(f"drop table {SCHEMA}.sealed_bill_lines")
    sealed.execute(f"create table {SCHEMA}.sealed_bill_lines as select * from work.saved")
    found = problems(sealed)
    assert any("sealed_bill_lines lost its PRIMARY KEY constraint" in p for p in found), found


def test_a_recreated_table_with_the_same_constraints_is_still_caught(sealed):
    from kubeledger.close.sealed_schema import DDL

    ddl = next(statement for statement in DDL if ".sealed_bill_lines (" in statement)
    sealed.execute(
        f"create table work.saved as select * replace ("
        "case when line_id = 'c1|compute|cc-a' then 3.34 else billed_cost end as billed_cost) "
        f"from {SCHEMA}.sealed_bill_lines"
    )
    sealed.execute(f"drop table {SCHEMA}.sealed_bill_lines")
    sealed.execute(ddl)
    sealed.execute(f"insert into {SCHEMA}.sealed_bill_lines select * from work.saved")
    found = problems(sealed)
    assert any(
        "line c1|compute|cc-a: billed_cost is 3.34 in the warehouse, 33.34" in p for p in found
    )


def test_a_forged_digest_is_caught_by_the_copy_and_the_chain(sealed):
    sealed.execute(
        f"update {SCHEMA}.sealed_bill_lines set billed_cost = 34.34 "
        "where line_id = 'c1|compute|cc-a' and bill_month = '2026-10'"
    )
    sealed.execute(
        f"update {SCHEMA}.sealed_bill_lines set billed_cost = 32.33 "
        "where line_id = 'c1|compute|cc-b'"
    )
    from kubeledger.close.digest import content_hash

    bill_id = sealed.execute(
        f"select bill_id from {SCHEMA}.sealed_bills where bill_month = ?", [MONTH]
    ).fetchone()[0]
    forged, _ = content_hash(sealed, "bill", bill_id)
    sealed.execute(
        f"update {SCHEMA}.seal_digests set content_hash = ? where artifact_id = ?",
        [forged, bill_id],
    )
    found = problems(sealed)
    assert any("chain hash" in p for p in found), found
    assert any("the copy's content_hash is" in p for p in found), found
    assert any("line c1|compute|cc-a: billed_cost is 34.34" in p for p in found), found


def test_a_whole_bill_deleted_or_a_bill_inserted_behind_the_close_is_caught(sealed):
    bill_id = sealed.execute(
        f"select bill_id from {SCHEMA}.sealed_bills where bill_month = ?", [NOVEMBER]
    ).fetchone()[0]
    for table in (
        "seal_digests",
        "sealed_billing_line_refs",
        "sealed_bill_lines",
        "sealed_bill_clusters",
        "sealed_bills",
    ):
        sealed.execute(f"delete from {SCHEMA}.{table} where bill_id = ?", [bill_id])
    found = problems(sealed)
    assert any(
        f"2026-11 {bill_id}: a sealed copy exists" in p and "no such seal (deleted?)" in p
        for p in found
    ), found
    sealed.execute(
        f"insert into {SCHEMA}.sealed_bills select * replace ('2026-12' as bill_month, "
        f"'bill-2026-12-forged' as bill_id) from {SCHEMA}.sealed_bills where bill_month = ?",
        [MONTH],
    )
    found = problems(sealed, "2026-12")
    assert any(
        "2026-12 bill-2026-12-forged: in sealed.sealed_bills but never sealed" in p for p in found
    )


def test_bill_and_explain_refuse_a_month_that_fails_verification(sealed):
    assert bills.load_bill(sealed, MONTH).state == "sealed"
    sealed.execute(
        f"update {SCHEMA}.sealed_bill_lines set billed_cost = 34.34 "
        "where line_id = 'c1|compute|cc-a' and bill_month = '2026-10'"
    )
    with pytest.raises(bills.UnverifiedBillError, match="month 2026-10 fails verification"):
        bills.load_bill(sealed, MONTH)
    with pytest.raises(bills.UnverifiedBillError):
        bills.explain_line(sealed, MONTH, "c1|compute|cc-a")


def test_a_correction_is_hashed_chained_and_copied_too(sealed):
    slices, lines = balanced_bill()
    slices[0]["target_cost"] = Decimal("100.30")
    lines[0]["billed_cost"], lines[1]["billed_cost"] = Decimal("33.44"), Decimal("33.53")
    write_bill(sealed, slices, lines)
    correction = seal_correction(sealed, MONTH, SOURCES, as_of=AS_OF + dt.timedelta(days=40))
    assert verify_seals(sealed).ok
    kinds = sealed.execute(
        f"select artifact_kind, artifact_id from {SCHEMA}.seal_digests order by sequence_number"
    ).fetchall()
    assert kinds[-1] == ("correction", correction.correction_id)
    sealed.execute(
        f"update {SCHEMA}.correction_bill_lines set recomputed_target_cost = 1 "
        "where line_id = 'c1|compute|cc-a' and bill_month = '2026-10'"
    )
    found = problems(sealed, MONTH)
    assert any(
        f"{correction.correction_id}: {SCHEMA}.correction_bill_lines, slice c1/compute, "
        "line c1|compute|cc-a: recomputed_target_cost is 1.00 in the warehouse" in p
        for p in found
    ), found


def test_a_seal_interrupted_before_its_commit_leaves_no_seal_and_a_rerun_seals(
    tmp_path, monkeypatch
):
    from kubeledger.close import digest

    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    write_bill(con, *balanced_bill())

    def crash(_folder):
        raise KeyboardInterrupt  # stands in for the process dying between copy and commit

    real_write = digest.write_copy

    def write_then_die(*args, **kwargs):
        real_write(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(digest, "write_copy", write_then_die)
    with pytest.raises(KeyboardInterrupt):
        seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    monkeypatch.setattr(digest, "write_copy", real_write)
    assert con.execute(f"select count(*) from {SCHEMA}.sealed_bills").fetchone()[0] == 0
    assert verify_seals(con).ok
    bill = seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    report = verify_seals(con)
    assert report.ok and report.artifacts == [bill.bill_id]
    assert any(".interrupted-" in note for note in report.notes)
    con.close()


def test_a_seal_interrupted_after_its_commit_is_finalized_by_verify(tmp_path, monkeypatch):
    from kubeledger.close import digest

    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    write_bill(con, *balanced_bill())
    monkeypatch.setattr(digest, "finalize", lambda folder: None)
    bill = seal_month(con, MONTH, SOURCES, as_of=AS_OF)
    monkeypatch.undo()
    folder = copy_root(con) / MONTH / bill.bill_id
    assert (folder / "manifest.pending.json").exists() and not (folder / "manifest.json").exists()
    report = verify_seals(con)
    assert report.ok, report.problems
    assert (folder / "manifest.json").exists()
    assert any("finalized the copy" in note for note in report.notes)
    con.close()


def test_the_report_refuses_a_month_that_fails_verification(sealed):
    from kubeledger.report.data import ReportError, load_report_data

    sealed.execute(f"delete from {SCHEMA}.sealed_billing_line_refs where billing_line_id = 'bl-1'")
    with pytest.raises(ReportError, match="month 2026-10 fails verification"):
        load_report_data(sealed, MONTH)
