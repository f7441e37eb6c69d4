"""Bad landing files: a clear error naming the file (and column), or a quarantine row."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import duckdb
import pytest

from kubeledger.load import LoadError, load_landing

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples"


def land(landing: Path, *samples: str) -> Path:
    for sample in samples:
        target = landing / sample
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / sample, target)
    return landing


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def replace_in_sample(sample: str, old: str, new: str, count: int = 1) -> str:
    text = (SAMPLES / sample).read_text()
    assert text.count(old) >= count, old
    return text.replace(old, new, count)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    yield connection
    connection.close()


def raw_tables_exist(con: duckdb.DuckDBPyConnection) -> bool:
    return (
        con.execute(
            "select count(*) from information_schema.tables where table_schema = 'raw'"
        ).fetchone()[0]
        > 0
    )


def test_unknown_header_names_the_file_and_what_was_expected(con, tmp_path):
    landing = land(tmp_path / "landing", "aws/cur-legacy-2026-10.csv")
    write(landing / "exports" / "invoice.csv", "invoice_number,amount\nINV-1,12.50\n")

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)

    message = str(err.value)
    assert message.startswith("exports/invoice.csv: has a header no known format has")
    assert "(columns: invoice_number, amount)" in message
    assert "AWS Cost and Usage Report (legacy): lineItem/UsageStartDate" in message
    assert "FOCUS 1.0-1.2 export: ChargePeriodStart + EffectiveCost" in message
    # Nothing of the call was kept, not even the good file checked before it.
    assert not raw_tables_exist(con)


def test_missing_required_column_names_the_file_and_the_column(con, tmp_path):
    landing = tmp_path / "landing"
    text = (SAMPLES / "aws/cur-legacy-2026-10.csv").read_text()
    header, *rows = text.splitlines()
    columns = header.split(",")
    drop = columns.index("lineItem/UnblendedCost")
    trimmed = [
        ",".join(c for i, c in enumerate(line.split(",")) if i != drop)
        for line in [header, rows[0]]
    ]
    write(landing / "aws" / "cur.csv", "\n".join(trimmed) + "\n")

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)

    assert err.value.source_file == "aws/cur.csv"
    assert err.value.column == "lineItem/UnblendedCost"
    assert str(err.value).startswith(
        "aws/cur.csv: is a AWS Cost and Usage Report (legacy) file but lacks the required "
        "column lineItem/UnblendedCost."
    )


def test_missing_required_alternatives_are_named_together(con, tmp_path):
    landing = tmp_path / "landing"
    write(
        landing / "azure.csv",
        "SubscriptionId,Date,MeterCategory,ResourceId,Quantity\n"
        "0b1c,10/06/2026,Virtual Machines,/subscriptions/0b1c/x,24\n",
    )
    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert "lacks the required column CostInBillingCurrency or Cost." in str(err.value)


def test_missing_required_koku_columns_are_all_listed(con, tmp_path):
    landing = tmp_path / "landing"
    write(
        landing / "c1" / "pod.csv",
        "interval_start,interval_end,node,namespace,pod,pod_usage_cpu_core_seconds\n",
    )
    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    message = str(err.value)
    assert message.startswith("c1/pod.csv: is a koku-metrics-operator pod report file")
    assert "required columns pod_request_cpu_core_seconds, pod_usage_memory_byte_seconds" in message
    assert err.value.column == "pod_request_cpu_core_seconds"


def test_truncated_gz_is_refused_and_nothing_is_kept(con, tmp_path):
    landing = land(tmp_path / "landing", "supplementary/nodes.csv")
    header = (SAMPLES / "koku/pod-usage.csv").read_text().splitlines()[0]
    body = "".join(
        f"2026-10-01 00:00:00 +0000 UTC,2026-11-01 00:00:00 +0000 UTC,"
        f"2026-10-06 18:00:00 +0000 UTC,2026-10-06 18:59:59 +0000 UTC,node-{i % 7},ns-{i % 5},"
        f"pod-{i},{i}.5,36,,{i}00,1887436800,,4,14400,16502939648,59410582732800,worker,"
        f"i-{i:017x},label_app:a{i}\n"
        for i in range(20000)
    )
    whole = gzip.compress((header + "\n" + body).encode(), mtime=0)
    target = landing / "c1" / "pod-usage.csv.gz"
    target.parent.mkdir(parents=True)
    target.write_bytes(whole[: len(whole) // 2])

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)

    assert str(err.value).startswith("c1/pod-usage.csv.gz: cannot be read:")
    assert "re-export or re-download it" in str(err.value)
    assert not raw_tables_exist(con)


def test_csv_with_a_ragged_last_line_is_refused(con, tmp_path):
    landing = tmp_path / "landing"
    text = (SAMPLES / "supplementary/owners.csv").read_text()
    write(landing / "owners.csv", text + "prod-east-1,batch,Pod\n")

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)

    message = str(err.value)
    assert message.startswith("owners.csv: cannot be read: CSV Error on Line: 7")
    assert "Expected Number of Columns: 6 Found: 3" in message


def test_csv_with_an_unterminated_quote_is_refused(con, tmp_path):
    landing = tmp_path / "landing"
    text = (SAMPLES / "supplementary/lb-services.csv").read_text()
    write(landing / "lb.csv", text + 'prod-east-1,web,"frontend,abc\n')

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert str(err.value).startswith("lb.csv: cannot be read:")


def test_a_parquet_name_on_a_file_that_is_not_parquet(con, tmp_path):
    landing = land(tmp_path / "landing", "aws/cur-legacy-2026-10.csv")
    shutil.move(landing / "aws/cur-legacy-2026-10.csv", landing / "aws/cur.parquet")

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert str(err.value).startswith("aws/cur.parquet: is named .parquet but is not a Parquet file")


def test_a_truncated_parquet_file(con, tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    whole = (SAMPLES / "gcp/billing-export-2026-09.parquet").read_bytes()
    (landing / "gcp.parquet").write_bytes(whole[: len(whole) // 2])

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert str(err.value).startswith("gcp.parquet: is not a readable Parquet file")


def test_truncated_json_is_refused(con, tmp_path):
    landing = tmp_path / "landing"
    text = (SAMPLES / "gcp/billing-export-2026-10.jsonl").read_text()
    write(landing / "gcp.jsonl", text[: len(text) // 2])

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert str(err.value).startswith("gcp.jsonl: is not readable JSON")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.csv", b"", "empty.csv: is empty (no header line)."),
        ("header-less.csv", b"\n\n", "header-less.csv: has no header line."),
        ("archive.zip", None, "archive.zip: is a ZIP archive."),
        ("package.tar.gz", None, "package.tar.gz: is a tar archive."),
    ],
)
def test_files_that_are_no_table_at_all(con, tmp_path, name, content, expected):
    landing = tmp_path / "landing"
    landing.mkdir()
    if name.endswith(".zip"):
        with zipfile.ZipFile(landing / name, "w") as archive:
            archive.writestr("cur.csv", "a,b\n1,2\n")
    elif name.endswith(".tar.gz"):
        with tarfile.open(landing / name, "w:gz") as archive:
            data = b"a,b\n1,2\n"
            info = tarfile.TarInfo("pod-usage.csv")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    else:
        (landing / name).write_bytes(content)

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert str(err.value).startswith(expected)


def test_unreadable_operator_manifest(con, tmp_path):
    landing = land(tmp_path / "landing", "koku/pod-usage.csv")
    write(landing / "koku" / "manifest.json", '{"cluster_id": "prod-east-1",')

    with pytest.raises(LoadError) as err:
        load_landing(con, landing)
    assert str(err.value).startswith("koku/manifest.json: is not a readable JSON manifest")


def test_non_numeric_cost_is_quarantined_and_the_other_rows_load(con, tmp_path):
    landing = tmp_path / "landing"
    text = replace_in_sample(
        "aws/cur-legacy-2026-10.csv", ",0.0800000000,0.0109589041,", ",0.0800000000,n/a,"
    )
    # A negative cost reads: data-quality checks judge it later, the loader keeps it.
    text = text.replace(",0.0225000000,0.0225000000,", ",0.0225000000,-0.0225000000,")
    write(landing / "aws" / "cur.csv", text)

    summary = load_landing(con, landing)

    assert summary.rows_by_table == {"aws_cur_legacy": 4}
    assert summary.rows_quarantined == 1
    assert summary.files[0].line() == (
        "loaded  aws/cur.csv -> raw.aws_cur_legacy: 4 rows (1 quarantined)"
    )
    assert con.execute(
        "select _source_file, _row_number, format, column_name, reason, raw_value "
        "from raw.quarantine"
    ).fetchall() == [
        ("aws/cur.csv", 3, "aws_cur_legacy", "lineItem/UnblendedCost", "not a number", "n/a")
    ]
    assert con.execute("select _row_number from raw.aws_cur_legacy order by 1").fetchall() == [
        (1,),
        (2,),
        (4,),
        (5,),
    ]
    assert con.execute(
        'select "lineItem/UnblendedCost" from raw.aws_cur_legacy where _row_number = 4'
    ).fetchone() == ("-0.0225000000",)
    assert con.execute("select rows_loaded, rows_quarantined from raw.loaded_files").fetchone() == (
        4,
        1,
    )


def test_unreadable_timestamps_are_quarantined_per_column(con, tmp_path):
    landing = tmp_path / "landing"
    text = replace_in_sample(
        "koku/pod-usage.csv",
        "2026-10-06 18:00:00 +0000 UTC,2026-10-06 18:59:59 +0000 UTC,ip-10-0-150-20",
        "yesterday,2026-10-06 18:59:59 +0000 UTC,ip-10-0-150-20",
    )
    text = text.replace("1800.000000,3600.000000", "1800.000000,NaN")
    write(landing / "c1" / "pod-usage.csv", text)
    azure = replace_in_sample(
        "azure/cost-details-amortized-2026-10.csv",
        ",10/06/2026,Managed Disks",
        ",13/45/2026,Managed Disks",
    )
    write(landing / "azure" / "cost.csv", azure)

    summary = load_landing(con, landing)

    assert summary.rows_quarantined == 3
    assert summary.rows_by_table == {"azure_cost_details": 2, "koku_pod_usage": 2}
    assert con.execute(
        "select _source_file, _row_number, column_name, raw_value, reason like 'not a timestamp%' "
        "from raw.quarantine order by all"
    ).fetchall() == [
        ("azure/cost.csv", 2, "Date", "13/45/2026", True),
        ("c1/pod-usage.csv", 1, "pod_request_cpu_core_seconds", "NaN", False),
        ("c1/pod-usage.csv", 3, "interval_start", "yesterday", True),
    ]


@pytest.mark.parametrize(
    "value",
    [
        "2026-10-06 18:00:00 +0000 UTC",
        "2026-10-06 18:00:00.123456789 +0000 UTC",
        "2026-10-06T18:00:00Z",
        "2026-10-06T18:00:00.000Z",
        "2026-10-06 18:00:00 UTC",
        "2026-10-06",
        "10/06/2026",
        "10/6/2026 1:00:00 PM",
        "",
    ],
)
def test_every_timestamp_form_the_sources_write_reads(con, tmp_path, value):
    landing = tmp_path / "landing"
    write(
        landing / "rate-card.csv",
        "cluster_id,resource,selector_type,selector,price,effective_from\n"
        f"dc1,node,name,metal-01,1.25,{value}\n",
    )
    summary = load_landing(con, landing)
    assert (summary.rows_loaded, summary.rows_quarantined) == (1, 0)


def test_an_unknown_extra_column_is_kept_in_extra(con, tmp_path):
    landing = tmp_path / "landing"
    text = (SAMPLES / "koku/pod-usage.csv").read_text().splitlines()
    text[0] += ",pod_usage_gpu_seconds"
    text[1:] = [line + ",42.5" for line in text[1:]]
    write(landing / "c1" / "pod-usage.csv", "\n".join(text) + "\n")

    load_landing(con, landing)

    extras = con.execute("select _extra from raw.koku_pod_usage order by _row_number").fetchall()
    assert [json.loads(e) for (e,) in extras] == [{"pod_usage_gpu_seconds": "42.5"}] * 4


def test_a_full_disk_or_memory_is_not_blamed_on_the_file(tmp_path):
    """Staging a file can fail for want of disk or memory on this machine: the error still
    names the file the load stopped at, but says what ran out, not that the file is damaged."""
    from kubeledger.load import loader

    report = tmp_path / "x.csv"
    report.write_text("a,b\n" + "".join(f"{i},hello number {i}\n" for i in range(300_000)))
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        con.execute("set memory_limit = '2MB'")
        con.execute("set max_temp_directory_size = '1KB'")
        with pytest.raises(duckdb.OutOfMemoryException) as memory:
            con.execute(f"create temp table t as select * from read_csv('{report}')")
    disk = duckdb.IOException(
        'Could not write file "/w/kubeledger.duckdb.tmp/duckdb_temp_1_storage.tmp": '
        "No space left on device"
    )
    for exc, what in ((memory.value, "memory"), (disk, "disk")):
        error = loader._read_error("usage/eks/2026-10-20/r.0.csv.gz", exc)
        assert str(error).startswith("usage/eks/2026-10-20/r.0.csv.gz: could not be staged")
        assert f"ran out of {what}" in error.problem and "not at fault" in error.fix
        assert "damaged" not in str(error)
    ragged = loader._read_error("a.csv", duckdb.InvalidInputException("Invalid Input Error: x"))
    assert "damaged" in str(ragged) and "ran out" not in str(ragged)
