"""Files loaded in batches (one `read_csv` over many files of one format) load exactly as file
by file: the same raw rows in the same order, the same quarantine, the same per-file results,
progress lines and errors."""

from __future__ import annotations

import csv
import gzip
import io
import shutil
from pathlib import Path

import duckdb
import pytest

from kubeledger.generate import generate_fleet
from kubeledger.load import load_landing, loader
from kubeledger.load.errors import LoadError
from tests.test_load_restatements import CUR, SAMPLES

_STAGE = loader._stage
_INSERT = loader._insert


def _edit(path: Path, edits: dict[tuple[int, str], str]) -> None:
    """Set the values at (data row, column) of a CSV file, quoting as the csv module does."""
    rows = list(csv.reader(io.StringIO(path.read_text())))
    header = rows[0]
    for (row, column), value in edits.items():
        rows[row][header.index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue())


def _reports(landing: Path, column: str) -> list[Path]:
    """The operator reports (in load order) whose header has `column`."""
    return [
        path
        for path in sorted(landing.rglob("*_openshift_usage_report.*.csv"))
        if column in path.read_text().split("\n", 1)[0].split(",")
    ]


@pytest.fixture(scope="module")
def messy_fleet(tmp_path_factory) -> Path:
    """A generated fleet with unreadable values: quarantined rows and nulled optional values."""
    root = tmp_path_factory.mktemp("fleet")
    generate_fleet(root, clusters=2, nodes=3, days=5, pods_per_node=4, workers=1)
    landing = root / "landing"
    pods = _reports(landing, "pod_usage_cpu_core_seconds")
    storage = _reports(landing, "persistentvolumeclaim_capacity_bytes")
    assert len(pods) == 10 and len(storage) == 10
    _edit(pods[1], {(3, "pod_usage_cpu_core_seconds"): "lots"})
    _edit(pods[3], {(1, "interval_start"): "soon", (2, "pod_usage_cpu_core_seconds"): "n/a"})
    _edit(pods[7], {(5, "pod_request_memory_byte_seconds"): "many"})
    _edit(storage[4], {(2, "persistentvolumeclaim_capacity_bytes"): "big"})
    # Two legacy CUR files of one batch: unreadable costs (quarantined) and quantities
    # (optional: nulled, the row loaded).
    for name, edits in (
        ("cur-a.csv", {(1, "lineItem/UsageAmount"): "some", (2, "lineItem/UnblendedCost"): "x"}),
        ("cur-b.csv", {(3, "lineItem/UsageAmount"): "?", (4, "lineItem/UsageAmount"): "n/a"}),
    ):
        target = landing / "billing" / "aws-legacy" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / CUR, target)
        _edit(target, edits)
    return landing


def _count_staged(monkeypatch) -> list[int]:
    """The number of files of each staging statement, from now on."""
    staged: list[int] = []

    def counting(con, items, slot):
        staged.append(len(items))
        return _STAGE(con, items, slot)

    monkeypatch.setattr(loader, "_stage", counting)
    return staged


def _load(*landings: Path, monkeypatch, batch_files: int) -> tuple[dict, list[str], list[int]]:
    """Load `landings` in turn into a new warehouse; its raw tables without load times, the
    progress lines and the number of files staged by each staging statement."""
    monkeypatch.setattr(loader, "BATCH_MAX_FILES", batch_files)
    staged = _count_staged(monkeypatch)
    lines: list[str] = []
    with duckdb.connect() as con:
        for landing in landings:
            summary = load_landing(con, landing, progress=lines.append)
            assert summary.files_loaded > 0
        return _raw_tables(con), lines, staged


def _raw_tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every raw table, load times replaced by whether they are set; in table order (rowid),
    except raw.quarantine, whose rows of one file come in no set order."""
    tables = {}
    names = con.execute(
        "select table_name from information_schema.tables where table_schema = 'raw' order by 1"
    ).fetchall()
    for (name,) in names:
        columns = con.execute(
            "select column_name, data_type from information_schema.columns "
            "where table_schema = 'raw' and table_name = ? order by ordinal_position",
            [name],
        ).fetchall()
        select = ", ".join(
            f'("{column}" is null)' if data_type.startswith("TIMESTAMP") else f'"{column}"'
            for column, data_type in columns
        )
        order = "order by all" if name == "quarantine" else "order by rowid"
        tables[name] = con.execute(f"select {select} from raw.{name} {order}").fetchall()
    return tables


def test_batches_load_the_same_rows_as_file_by_file(messy_fleet, monkeypatch):
    alone, alone_lines, alone_staged = _load(messy_fleet, monkeypatch=monkeypatch, batch_files=1)
    batched, batched_lines, batched_staged = _load(
        messy_fleet, monkeypatch=monkeypatch, batch_files=256
    )

    assert set(alone_staged) == {1}
    # 40 operator reports in 4 formats, 5 supplementary files in 3, 2 legacy CURs; the AWS
    # Parquet and the GCP JSON are staged alone.
    assert sorted(batched_staged, reverse=True) == [10, 10, 10, 10, 2, 2, 2, 1, 1, 1]
    assert batched.keys() == alone.keys()
    for name, rows in alone.items():
        assert batched[name] == rows, name
    assert batched_lines == alone_lines
    # the injected values: 5 in operator reports and 1 CUR cost quarantined, 3 CUR
    # quantities nulled (their rows kept)
    assert len(alone["quarantine"]) == 9
    nulled = [line for line in alone_lines if "unreadable optional values nulled" in line]
    assert nulled == [
        "loaded  billing/aws-legacy/cur-a.csv -> raw.aws_cur_legacy: 4 rows "
        "(1 quarantined, 1 unreadable optional values nulled)",
        "loaded  billing/aws-legacy/cur-b.csv -> raw.aws_cur_legacy: 5 rows "
        "(2 unreadable optional values nulled)",
    ]


def test_a_broken_file_in_a_batch_fails_as_it_does_alone(messy_fleet, tmp_path, monkeypatch):
    landing = tmp_path / "landing"
    shutil.copytree(messy_fleet, landing)
    pods = _reports(landing, "pod_usage_cpu_core_seconds")
    with pods[6].open("a") as fh:
        fh.write("2026-10-01,too,few\n")

    errors = []
    staged = _count_staged(monkeypatch)
    for batch_files in (1, 256):
        lines: list[str] = []
        monkeypatch.setattr(loader, "BATCH_MAX_FILES", batch_files)
        with duckdb.connect() as con, pytest.raises(LoadError) as err:
            load_landing(con, landing, progress=lines.append)
        errors.append((str(err.value), lines))

    # the batched load staged the broken file's batch, failed, and loaded again file by file
    assert max(staged) == 10
    assert errors[1] == errors[0]
    message, _ = errors[0]
    assert message.startswith(f"{pods[6].relative_to(landing).as_posix()}: cannot be read: ")
    assert "Found: 3" in message


def test_a_file_of_a_batch_that_changes_during_the_load_is_refused(tmp_path, monkeypatch):
    landing = tmp_path / "landing"
    (landing / "aws").mkdir(parents=True)
    for name, cost in (("cur-a.csv", "0.5"), ("cur-b.csv", "0.7")):
        shutil.copy(SAMPLES / CUR, landing / "aws" / name)
        _edit(landing / "aws" / name, {(1, "lineItem/UnblendedCost"): cost})
    real_hash = loader._file_hash

    def hash_then_truncate(file: Path) -> str:
        digest = real_hash(file)
        if file.name == "cur-b.csv":
            file.write_bytes(b"".join(file.read_bytes().splitlines(keepends=True)[:3]))
        return digest

    monkeypatch.setattr(loader, "_file_hash", hash_then_truncate)
    staged = _count_staged(monkeypatch)
    with duckdb.connect() as con, pytest.raises(LoadError) as refused:
        load_landing(con, landing)
    assert str(refused.value).startswith("aws/cur-b.csv: changed while it was being loaded")
    assert staged == [2, 1, 1]


def test_a_redelivered_cluster_day_restates_the_same_rows_in_batches(
    messy_fleet, tmp_path, monkeypatch
):
    """A second delivery of two cluster-days (each report with one value changed) restates
    the hours of the first, credited to the same files."""
    for day in sorted(messy_fleet.glob("usage/*/*"))[2:4]:
        again = tmp_path / "again" / day.relative_to(messy_fleet)
        shutil.copytree(day, again)
        for report in sorted(again.glob("*_openshift_usage_report.*.csv")):
            _edit(report, {(1, "interval_end"): "2026-10-09 00:00:00 +0000 UTC"})

    landings = (messy_fleet, tmp_path / "again")
    alone, alone_lines, _ = _load(*landings, monkeypatch=monkeypatch, batch_files=1)
    batched, batched_lines, staged = _load(*landings, monkeypatch=monkeypatch, batch_files=256)

    assert batched == alone
    assert batched_lines == alone_lines
    replaced = [line.split(" in ")[1] for line in alone_lines if line.startswith("replaced ")]
    assert replaced == [
        f"raw.koku_{table} (re-delivered report hours)"
        for table in ("pod_usage", "storage_usage", "node_labels", "namespace_labels")
    ]
    # the 8 reports of the days, each with rows replaced (raw.loaded_files' 9th column)
    assert len([row for row in alone["loaded_files"] if row[8]]) == 8
    assert staged[-4:] == [2, 2, 2, 2]


def test_gzipped_reports_load_the_same_in_batches(tmp_path, monkeypatch):
    generate_fleet(
        tmp_path, clusters=2, nodes=3, days=3, pods_per_node=4, workers=1, gzip_usage=True
    )
    landing = tmp_path / "landing"
    alone, alone_lines, _ = _load(landing, monkeypatch=monkeypatch, batch_files=1)
    batched, batched_lines, staged = _load(landing, monkeypatch=monkeypatch, batch_files=256)

    assert batched == alone
    assert batched_lines == alone_lines
    # 24 reports (2 clusters, 3 days, 4 formats) in 4 batches
    assert staged.count(6) == 4


def test_gzipped_reports_are_batched_by_the_text_they_unpack_to(tmp_path, monkeypatch):
    """A batch's bound counts the text a gzip file stages, not its size on disk: the stage
    table of a batch of 10,000-node gzip reports (512 MB packed, 3-4 GB of text) outgrew the
    load's memory cap and spilled until the disk was full."""
    generate_fleet(
        tmp_path, clusters=1, nodes=3, days=3, pods_per_node=4, workers=1, gzip_usage=True
    )
    landing = tmp_path / "landing"
    pods = sorted(landing.rglob("*_openshift_usage_report.0.csv.gz"))
    unpacked = [len(gzip.decompress(path.read_bytes())) for path in pods]
    assert len(pods) == 3 and sum(path.stat().st_size for path in pods) < min(unpacked)
    alone, _, _ = _load(landing, monkeypatch=monkeypatch, batch_files=1)

    monkeypatch.setattr(loader, "BATCH_MAX_BYTES", min(unpacked) + 1)  # one report's text
    monkeypatch.setattr(loader, "BATCH_MAX_FILES", 256)
    batches: list[list[str]] = []

    def recording(con, items, slot):
        batches.append([item.path.name for item in items])
        return _STAGE(con, items, slot)

    monkeypatch.setattr(loader, "_stage", recording)
    with duckdb.connect() as con:
        load_landing(con, landing)
        batched = _raw_tables(con)
    assert batched == alone
    with_pods = [batch for batch in batches if any(".0.csv" in name for name in batch)]
    assert len(with_pods) == 3 and all(len(batch) == 1 for batch in with_pods)
    # the small reports still share batches: three days of node labels in one
    assert max(len(batch) for batch in batches) == 3


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def test_staged_files_do_not_pile_up_in_the_warehouse_until_the_load_commits(tmp_path, monkeypatch):
    """A load is one transaction of the warehouse, which keeps every table it replaced until
    the commit: stage tables there piled up in `<warehouse>.tmp` (about 40 GB at the end of a
    10,000-node load). Staged in a database of the load's own, they are freed batch by batch:
    past the memory cap the warehouse's temporary folder never holds as much as one report."""
    generate_fleet(tmp_path, clusters=1, nodes=12, days=8, pods_per_node=20, workers=1)
    landing = tmp_path / "landing"
    pods = sorted(landing.rglob("*_openshift_usage_report.0.csv"))
    assert len(pods) == 8
    monkeypatch.setattr(loader, "BATCH_MAX_FILES", 1)
    monkeypatch.setitem(loader._LOAD_SETTINGS, "memory_limit", "64MB")
    warehouse = tmp_path / "w.duckdb"
    spilled: list[int] = []

    def measuring(cons, staged, loaded_at):
        _INSERT(cons, staged, loaded_at)
        spilled.append(_folder_bytes(Path(f"{warehouse}.tmp")))

    monkeypatch.setattr(loader, "_insert", measuring)
    summary = load_landing(warehouse, landing)

    assert len(spilled) == len([f for f in summary.files if f.status == "loaded"]) == 44
    assert max(spilled) < min(path.stat().st_size for path in pods)
    assert not Path(f"{warehouse}.load.tmp").exists()
    with duckdb.connect(str(warehouse)) as con:
        rows = con.execute(
            "select count(*) from raw.koku_pod_usage where _source_file like '%report.0.csv'"
        ).fetchone()[0]
    assert rows == sum(len(path.read_text().splitlines()) - 1 for path in pods)
