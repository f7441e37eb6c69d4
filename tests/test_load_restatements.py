"""Loading is idempotent; restated bills, re-delivered reports and new file versions replace."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from kubeledger.load import load_landing

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples"
CUR = "aws/cur-legacy-2026-10.csv"
POD = "koku/pod-usage.csv"


def land(landing: Path, *samples: str) -> Path:
    for sample in samples:
        target = landing / sample
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / sample, target)
    return landing


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def sample_lines(sample: str) -> list[str]:
    return (SAMPLES / sample).read_text().splitlines()


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    yield connection
    connection.close()


def cur_total(con: duckdb.DuckDBPyConnection, where: str = "true") -> tuple[int, Decimal]:
    return con.execute(
        'select count(*), sum("lineItem/UnblendedCost"::decimal(20, 10)) '
        f"from raw.aws_cur_legacy where {where}"
    ).fetchone()


COUNTS = (
    "select (select count(*) from raw.aws_cur_legacy), "
    "(select count(*) from raw.koku_pod_usage), "
    "(select count(*) from raw.loaded_files), (select count(*) from raw.quarantine)"
)


def test_loading_the_same_folder_twice_changes_nothing(con, tmp_path):
    landing = land(tmp_path / "landing", CUR, "koku/manifest.json", POD)
    first = load_landing(con, landing)
    snapshot = con.execute(COUNTS).fetchone()

    lines: list[str] = []
    second = load_landing(con, landing, progress=lines.append)

    assert (first.files_loaded, first.rows_loaded) == (2, 9)
    assert (second.files_loaded, second.files_skipped, second.rows_loaded) == (0, 2, 0)
    assert lines == [
        "skipped aws/cur-legacy-2026-10.csv: already loaded (same content)",
        "ignored koku/manifest.json: export manifest (not data)",
        "skipped koku/pod-usage.csv: already loaded (same content)",
    ]
    assert snapshot == (5, 4, 2, 0)
    assert con.execute(COUNTS).fetchone() == snapshot


def test_the_same_content_under_another_name_is_loaded_once(con, tmp_path):
    landing = land(tmp_path / "landing", CUR)
    shutil.copy(landing / CUR, landing / "aws" / "copy-of-cur.csv")

    summary = load_landing(con, landing)

    assert [(f.source_file, f.status) for f in summary.files] == [
        ("aws/copy-of-cur.csv", "loaded"),
        ("aws/cur-legacy-2026-10.csv", "skipped"),
    ]
    assert summary.files[1].note == "already loaded (same content as aws/copy-of-cur.csv)"
    assert cur_total(con) == (5, Decimal("12.9494589041"))


def restated_cur(lines: list[str]) -> list[str]:
    """The October CUR restated: the volume and LB lines gone, the first line re-priced."""
    header, usage, sp, _volume, _lb, tax = lines
    return [
        header,
        usage.replace(",0.1920000000,0.1920000000,", ",0.1920000000,0.2000000000,"),
        sp,
        tax,
    ]


def test_a_restated_billing_period_replaces_the_earlier_rows(con, tmp_path):
    landing = land(tmp_path / "landing", CUR)
    load_landing(con, landing)
    assert cur_total(con) == (5, Decimal("12.9494589041"))

    write(landing / "aws" / "cur-legacy-2026-10-restated.csv", restated_cur(sample_lines(CUR)))
    lines: list[str] = []
    summary = load_landing(con, landing, progress=lines.append)

    assert cur_total(con) == (3, Decimal("12.9240000000"))
    assert (summary.files_loaded, summary.files_skipped, summary.files_replaced) == (1, 1, 1)
    assert summary.rows_replaced == 5
    assert lines[-1] == (
        "replaced 5 rows of 1 earlier file in raw.aws_cur_legacy (restated billing periods)"
    )
    assert con.execute(
        "select source_file, rows_loaded, rows_replaced, replaced_at is not null "
        "from raw.loaded_files order by loaded_at"
    ).fetchall() == [
        ("aws/cur-legacy-2026-10.csv", 5, 0, True),
        ("aws/cur-legacy-2026-10-restated.csv", 3, 5, False),
    ]
    # The old delivery stays in the landing folder; later loads leave the restatement alone.
    third = load_landing(con, landing)
    assert (third.files_loaded, third.files_skipped) == (0, 2)
    assert cur_total(con) == (3, Decimal("12.9240000000"))


def test_a_restatement_leaves_other_periods_and_accounts_alone(con, tmp_path):
    landing = land(tmp_path / "landing", CUR)
    september = [
        line.replace(
            "2026-10-01T00:00:00Z,2026-11-01T00:00:00Z", "2026-09-01T00:00:00Z,2026-10-01T00:00:00Z"
        ).replace("2026-10-06T", "2026-09-06T")
        for line in sample_lines(CUR)
    ]
    write(landing / "aws" / "cur-legacy-2026-09.csv", september)
    other_payer = [line.replace(",123456789012,", ",555555555555,") for line in sample_lines(CUR)]
    write(landing / "aws" / "other-payer-2026-10.csv", other_payer)
    load_landing(con, landing)
    assert cur_total(con) == (15, Decimal("38.8483767123"))

    write(landing / "aws" / "cur-legacy-2026-10-restated.csv", restated_cur(sample_lines(CUR)))
    load_landing(con, landing)

    assert cur_total(con) == (13, Decimal("38.8229178082"))
    assert cur_total(con, """"bill/BillingPeriodStartDate" like '2026-09%'""") == (
        5,
        Decimal("12.9494589041"),
    )
    assert cur_total(con, """"bill/PayerAccountId" = '555555555555'""") == (
        5,
        Decimal("12.9494589041"),
    )


def test_a_period_in_several_parts_is_replaced_by_the_new_set_of_parts(con, tmp_path):
    header, *rows = sample_lines(CUR)
    landing = tmp_path / "landing"
    write(landing / "aws" / "2026-10" / "v1" / "cur-00001.csv", [header, *rows[:2]])
    write(landing / "aws" / "2026-10" / "v1" / "cur-00002.csv", [header, *rows[2:]])
    first = load_landing(con, landing)
    assert first.rows_replaced == 0
    assert cur_total(con) == (5, Decimal("12.9494589041"))

    repriced = [r.replace(",12.3400000000,", ",12.0000000000,") for r in rows]
    write(landing / "aws" / "2026-10" / "v2" / "cur-00001.csv", [header, *repriced[:3]])
    write(landing / "aws" / "2026-10" / "v2" / "cur-00002.csv", [header, *repriced[3:]])
    second = load_landing(con, landing)

    assert cur_total(con) == (5, Decimal("12.6094589041"))
    assert second.files_loaded == 2
    assert second.rows_replaced == 5
    assert con.execute(
        "select distinct _source_file from raw.aws_cur_legacy order by 1"
    ).fetchall() == [("aws/2026-10/v2/cur-00001.csv",), ("aws/2026-10/v2/cur-00002.csv",)]


def test_quarantined_rows_of_a_replaced_file_go_with_it(con, tmp_path):
    landing = tmp_path / "landing"
    broken = [
        line.replace(",0.0800000000,0.0109589041,", ",0.0800000000,n/a,")
        for line in sample_lines(CUR)
    ]
    write(landing / "aws" / "cur.csv", broken)
    load_landing(con, landing)
    assert con.execute("select count(*) from raw.quarantine").fetchone() == (1,)

    write(landing / "aws" / "cur-fixed.csv", sample_lines(CUR))
    load_landing(con, landing)

    assert con.execute("select count(*) from raw.quarantine").fetchone() == (0,)
    assert cur_total(con) == (5, Decimal("12.9494589041"))


def test_a_redelivered_koku_report_replaces_the_same_hours_of_the_same_cluster(con, tmp_path):
    landing = land(tmp_path / "landing", "koku/manifest.json", POD)
    load_landing(con, landing)
    header, *rows = sample_lines(POD)

    # Re-delivered hour 18 (three pods), a new hour 19, and another cluster's hour 18.
    write(landing / "koku" / "pod-usage-redelivered.csv", [header, *rows[:3]])
    write(
        landing / "koku" / "pod-usage-19.csv",
        [header] + [r.replace(" 18:", " 19:") for r in rows[:2]],
    )
    write(landing / "other-cluster" / "pod-usage.csv", [header, rows[3]])
    summary = load_landing(con, landing)

    assert con.execute(
        "select _cluster_id, interval_start, count(*) from raw.koku_pod_usage "
        "group by all order by all"
    ).fetchall() == [
        ("other-cluster", "2026-10-06 18:00:00 +0000 UTC", 1),
        ("prod-east-1", "2026-10-06 18:00:00 +0000 UTC", 3),
        ("prod-east-1", "2026-10-06 19:00:00 +0000 UTC", 2),
    ]
    assert summary.rows_replaced == 4
    assert summary.files_replaced == 1
    assert [f.rows_replaced for f in summary.files if f.status == "loaded"] == [0, 4, 0]
    assert con.execute(
        "select period_key from raw.loaded_files where source_file = 'koku/pod-usage-19.csv'"
    ).fetchone() == ("prod-east-1|2026-10-06 19:00:00 +0000 UTC",)


def test_a_new_version_of_a_supplementary_file_replaces_the_old_one(con, tmp_path):
    landing = land(tmp_path / "landing", "supplementary/nodes.csv")
    nodes = landing / "supplementary" / "nodes.csv"
    version_1 = nodes.read_text()
    load_landing(con, landing)

    write(nodes, version_1.splitlines()[:3])
    second = load_landing(con, landing)
    assert con.execute("select count(*) from raw.cluster_nodes").fetchone() == (2,)
    assert second.rows_replaced == 4

    # Back to the first version: it is the current content again, so it loads again.
    nodes.write_text(version_1)
    third = load_landing(con, landing)
    assert third.files_loaded == 1
    assert con.execute("select count(*) from raw.cluster_nodes").fetchone() == (4,)

    # A version with only its header empties the table.
    write(nodes, version_1.splitlines()[:1])
    load_landing(con, landing)
    assert con.execute("select count(*) from raw.cluster_nodes").fetchone() == (0,)
    assert con.execute("select count(*) from raw.loaded_files").fetchone() == (4,)


def test_google_cloud_restatement_is_by_account_and_invoice_month(con, tmp_path):
    sample = "gcp/billing-export-2026-10.jsonl"
    landing = land(tmp_path / "landing", sample)
    load_landing(con, landing)
    first, second, _ = sample_lines(sample)
    other_month = second.replace('"month":"202610"', '"month":"202609"')
    write(landing / "gcp" / "billing-export-2026-09.jsonl", [other_month])
    load_landing(con, landing)

    write(
        landing / "gcp" / "billing-export-2026-10-restated.jsonl",
        [first.replace('"cost":0.126652', '"cost":0.13')],
    )
    load_landing(con, landing)

    assert con.execute(
        "select invoice_month, count(*), sum(cost::decimal(18, 6)) from raw.gcp_billing_export "
        "group by all order by all"
    ).fetchall() == [("202609", 1, Decimal("0.005479")), ("202610", 1, Decimal("0.130000"))]


def test_azure_restatement_without_billing_account_uses_subscription_and_month(con, tmp_path):
    sample = "azure/ea-usage-details-2025-03.csv"
    landing = land(tmp_path / "landing", sample)
    load_landing(con, landing)
    header, vm, _bandwidth = sample_lines(sample)

    write(
        landing / "azure" / "ea-usage-details-2025-03-restated.csv",
        [header, vm.replace("03/14/2025", "03/31/2025")],
    )
    load_landing(con, landing)

    assert con.execute("select Date, Cost from raw.azure_cost_details").fetchall() == [
        ("03/31/2025", "0.04608")
    ]


def test_identical_reports_of_two_clusters_are_both_loaded(con, tmp_path):
    """Two clusters can send byte-identical label reports: same namespaces, same hours."""
    landing = land(tmp_path / "landing", "koku/namespace-labels.csv")
    shutil.copytree(landing / "koku", landing / "other-cluster")

    first = load_landing(con, landing)
    second = load_landing(con, landing)

    assert (first.files_loaded, first.files_skipped) == (2, 0)
    assert (second.files_loaded, second.files_skipped) == (0, 2)
    assert con.execute(
        "select _cluster_id, count(*) from raw.koku_namespace_labels group by all order by all"
    ).fetchall() == [("koku", 3), ("other-cluster", 3)]
    assert con.execute(
        "select cluster_id from raw.loaded_files order by cluster_id"
    ).fetchall() == [("koku",), ("other-cluster",)]
