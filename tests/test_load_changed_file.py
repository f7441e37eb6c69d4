"""A file is loaded from the bytes that were hashed: one that changes during a load is refused
with its name, and the complete file loads in full afterwards (never skipped as loaded)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from kubeledger.load import LoadError, ensure_raw_schema, load_landing
from kubeledger.load import loader as loader_module
from tests.test_load_restatements import CUR, SAMPLES


def test_a_file_truncated_between_hash_and_read_is_refused_then_loads_whole(tmp_path, monkeypatch):
    landing = tmp_path / "landing"
    (landing / "aws").mkdir(parents=True)
    path = landing / CUR
    shutil.copy(SAMPLES / CUR, path)
    complete = path.read_bytes()
    header_and_two_rows = b"".join(complete.splitlines(keepends=True)[:3])
    real_hash = loader_module._file_hash
    truncated: list[Path] = []

    def hash_then_truncate(file: Path) -> str:
        digest = real_hash(file)
        if file.name == Path(CUR).name and not truncated:
            file.write_bytes(header_and_two_rows)  # the export is rewritten at a row boundary
            truncated.append(file)
        return digest

    monkeypatch.setattr(loader_module, "_file_hash", hash_then_truncate)
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    ensure_raw_schema(con)
    with pytest.raises(LoadError) as refused:
        load_landing(con, landing)
    assert str(refused.value).startswith(
        "aws/cur-legacy-2026-10.csv: changed while it was being loaded"
    )
    assert con.execute("select count(*) from raw.aws_cur_legacy").fetchone() == (0,)
    assert con.execute("select count(*) from raw.loaded_files").fetchone() == (0,)

    monkeypatch.undo()
    path.write_bytes(complete)
    summary = load_landing(con, landing)
    assert (summary.files_loaded, summary.rows_loaded) == (1, 5)
    assert con.execute("select count(*) from raw.aws_cur_legacy").fetchone() == (5,)
    con.close()
