"""The quality gate of `kubeledger build`: the raw-data expectation suites run before any
model and block, with the file, row and value of every failing row (SPEC §1.5, §13, §14).

Each probe case silently changed a daily figure when `kubeledger build` skipped the suites;
here it must stop the build before dbt runs and land in ops.expectation_results.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from kubeledger import warehouse
from kubeledger.cli import main, run_build
from kubeledger.load import load_landing
from kubeledger.quality_gate import QualityGateError

SAMPLES = Path(__file__).parent / "fixtures" / "landing_samples"
CUR = "aws/cur-legacy-2026-10.csv"
POD = "koku/pod-usage.csv"
NODES = "supplementary/nodes.csv"


class DbtRan(Exception):
    pass


PARSED = object()  # the fixture's stand-in for dbt's manifest


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """Land the samples with `edit(name, lines)` applied, load them, run the build up to dbt."""
    monkeypatch.setenv("KUBELEDGER_DB", str(tmp_path / "ledger.duckdb"))
    monkeypatch.setenv("KUBELEDGER_CONFIG", str(tmp_path / "absent.yml"))

    def no_dbt(*_args, **_kwargs):
        raise DbtRan

    monkeypatch.setattr(warehouse, "run_dbt", no_dbt)
    # the parse the build does while the gate runs (its own test below runs dbt's)
    monkeypatch.setattr(warehouse, "parse_dbt_project", lambda _db: PARSED)

    def run(edits: dict[str, callable]) -> QualityGateError | None:
        landing = tmp_path / "landing"
        for sample in ("koku/manifest.json", POD, CUR, NODES):
            lines = (SAMPLES / sample).read_text().splitlines()
            if sample == POD:
                lines = lines[:4]  # the sample's 4th row has no node: it fails `node is filled`
            if sample in edits:
                lines = edits[sample](lines)
            (landing / sample).parent.mkdir(parents=True, exist_ok=True)
            (landing / sample).write_text("\n".join(lines) + "\n")
        load_landing(tmp_path / "ledger.duckdb", landing)
        try:
            run_build(progress=None)
        except QualityGateError as exc:
            return exc
        except DbtRan:
            return None
        raise AssertionError("the build neither failed the gate nor reached dbt")

    return run


def results(tmp_path) -> list[tuple]:
    with duckdb.connect(str(tmp_path / "ledger.duckdb")) as con:
        return con.execute(
            "select raw_table, description, cluster_id, cast(usage_date as varchar), "
            "unexpected_count, sample_rows from ops.expectation_results order by all"
        ).fetchall()


def row(lines: list[str], index: int, old: str, new: str) -> list[str]:
    assert old in lines[index], (old, lines[index])
    return [*lines[:index], lines[index].replace(old, new, 1), *lines[index + 1 :]]


def test_clean_samples_pass_the_gate_and_reach_dbt(gate, tmp_path):
    assert gate({}) is None
    assert results(tmp_path) == []


def test_an_unknown_aws_line_item_type_blocks_and_is_never_reclassified(gate, tmp_path):
    refused = gate({CUR: lambda lines: row(lines, 1, ",Usage,", ",WeirdUsage,")})
    assert refused is not None
    assert "aws_cur_legacy: lineItem/LineItemType is one of Usage, " in str(refused)
    assert "    aws/cur-legacy-2026-10.csv row 1 (lineItem/LineItemType=WeirdUsage)" in str(refused)
    assert str(refused).startswith("the raw data fails its expectations, so nothing was built")
    (recorded,) = results(tmp_path)
    assert recorded[0] == "aws_cur_legacy" and recorded[3:] == (
        "2026-10-06",
        1,
        "aws/cur-legacy-2026-10.csv row 1",
    )


def test_two_currencies_in_one_billing_account_are_refused(gate):
    refused = gate({CUR: lambda lines: row(lines, 2, ",USD,", ",EUR,")})
    assert refused is not None
    assert "a billing account's lines are in one currency" in str(refused)
    assert (
        "aws/cur-legacy-2026-10.csv row 2 (account 123456789012 in EUR, its other lines in "
        "USD: no exchange rate from EUR to USD on 2026-10-06; add `exchange_rates` to "
        "kubeledger.yml)"
    ) in str(refused)


def test_a_currency_no_longer_converted_blocks_the_next_build(gate, tmp_path, monkeypatch):
    """One currency per billing account is checked over every line on every build, the lines
    of files validated clean before included: once kubeledger.yml drops the exchange rate that
    covered a line, the next build refuses it (the files and rows are unchanged)."""
    config = tmp_path / "kubeledger.yml"
    rate = "  - {from: EUR, to: USD, rate: 1.08, effective_from: 2026-10-01}\n"
    config.write_text(f"currency: USD\nexchange_rates:\n{rate}")
    monkeypatch.setenv("KUBELEDGER_CONFIG", str(config))
    assert gate({CUR: lambda lines: row(lines, 2, ",USD,", ",EUR,")}) is None
    config.write_text("currency: USD\n")
    with pytest.raises(QualityGateError) as refused:
        run_build(progress=None)
    assert (
        "aws/cur-legacy-2026-10.csv row 2 (account 123456789012 in EUR, its other lines in "
        "USD: no exchange rate from EUR to USD on 2026-10-06"
    ) in str(refused.value)


def test_negative_usage_blocks_with_its_row_and_value(gate, tmp_path):
    refused = gate({POD: lambda lines: row(lines, 1, ",1800.000000,", ",-5,")})
    assert refused is not None
    assert "koku_pod_usage: pod_usage_cpu_core_seconds is not negative: 1 rows" in str(refused)
    assert "koku/pod-usage.csv row 1 (pod_usage_cpu_core_seconds__value=-5.0)" in str(refused)
    assert ("koku_pod_usage", "pod_usage_cpu_core_seconds is not negative", "prod-east-1") == (
        results(tmp_path)[0][:3]
    )


def test_usage_far_above_node_capacity_blocks(gate):
    # 1800 core-seconds of a 14400 core-second node made 20000
    refused = gate({POD: lambda lines: row(lines, 1, ",1800.000000,", ",20000,")})
    assert refused is not None
    assert (
        "pod_usage_cpu_core_seconds is at most node_capacity_cpu_core_seconds x 1.05: 1 rows"
        in str(refused)
    )
    assert "koku/pod-usage.csv row 1 (" in str(refused)


def test_a_row_dated_outside_its_files_report_period_blocks(gate):
    # an October report with a November hour: it would have created a new cluster-day
    refused = gate(
        {
            POD: lambda lines: row(
                lines, 2, "2026-10-06 18:00:00 +0000 UTC", "2026-11-06 18:00:00 +0000 UTC"
            )
        }
    )
    assert refused is not None
    assert "koku_pod_usage: report_period_end is after interval_start: 1 rows" in str(refused)
    assert "koku/pod-usage.csv row 2 (" in str(refused)


def test_an_unknown_node_role_blocks(gate):
    refused = gate({POD: lambda lines: row(lines, 1, ",worker,", ",wizard,")})
    assert refused is not None
    assert "koku_pod_usage: node_role is one of worker, control-plane" in str(refused)
    assert "koku/pod-usage.csv row 1 (node_role__normalized=wizard)" in str(refused)


def test_an_on_prem_node_without_provider_id_passes(gate, tmp_path):
    from kubeledger.quality import validate_raw_tables

    onprem = "onprem-dc1,cp-1.dc1.internal,,2026-09-01T00:00:00Z,"
    assert gate({NODES: lambda lines: [*lines, onprem]}) is None
    # the same suite the Dagster landing check runs (it failed `provider_id is filled`)
    with duckdb.connect(str(tmp_path / "ledger.duckdb")) as con:
        (nodes,) = validate_raw_tables(con, tables=["cluster_nodes"])
    assert nodes.success and nodes.rows_checked == 5


def test_kubeledger_build_exits_non_zero_before_dbt(gate, tmp_path):
    gate({CUR: lambda lines: row(lines, 1, ",Usage,", ",WeirdUsage,")})
    result = CliRunner().invoke(main, ["build"])
    assert result.exit_code == 1
    assert "aws/cur-legacy-2026-10.csv row 1 (lineItem/LineItemType=WeirdUsage)" in result.output
    shutil.rmtree(tmp_path / "landing")


def _rows_checked(tmp_path) -> dict[str, int]:
    from kubeledger.quality_gate import run_quality_gate

    validations = run_quality_gate(tmp_path / "ledger.duckdb")
    return {v.raw_table: v.rows_checked for v in validations}


def test_a_clean_file_is_checked_once_until_it_or_its_suite_changes(gate, tmp_path, monkeypatch):
    assert gate({}) is None
    with duckdb.connect(str(tmp_path / "ledger.duckdb")) as con:
        recorded = con.execute(
            "select raw_table, source_file from ops.validated_files order by all"
        ).fetchall()
        loaded = con.execute("select count(*) from raw.koku_pod_usage").fetchone()[0]
    assert ("koku_pod_usage", POD) in recorded and ("aws_cur_legacy", CUR) in recorded
    # the next build checks no row again: every file was found clean with the same suites
    assert set(_rows_checked(tmp_path).values()) == {0}
    # a changed suite (or GX) checks every file anew
    from kubeledger.quality import validate

    fingerprint = validate.suite_fingerprint
    monkeypatch.setattr(validate, "suite_fingerprint", lambda suite: "x" + fingerprint(suite))
    assert _rows_checked(tmp_path)["koku_pod_usage"] == loaded
    assert _rows_checked(tmp_path)["koku_pod_usage"] == 0


def test_a_failing_file_is_checked_on_every_build_until_it_is_replaced(gate, tmp_path):
    bad = gate({POD: lambda lines: row(lines, 1, ",1800.000000,", ",-5,")})
    assert bad is not None
    with duckdb.connect(str(tmp_path / "ledger.duckdb")) as con:
        recorded = {
            source
            for (source,) in con.execute("select source_file from ops.validated_files").fetchall()
        }
    assert POD not in recorded and CUR in recorded  # the other files were clean
    for _ in range(2):  # refused again, with the same row: nothing remembered it as clean
        with pytest.raises(QualityGateError, match="koku/pod-usage.csv row 1"):
            run_build(progress=None)
    # the restated file replaces the rows: checked, clean, the build goes on to dbt
    assert gate({}) is None
    assert results(tmp_path) == []


def test_the_suites_run_in_a_child_process_whose_memory_goes_back(gate, tmp_path):
    """GX, pandas and each frame's copies stay in the gate's child process, so the build's
    dbt run does not sit on them (a third of a gigabyte at 1,000 nodes)."""
    import subprocess
    import sys

    assert gate({}) is None  # loads the samples (and checks them once)
    with duckdb.connect(str(tmp_path / "ledger.duckdb")) as con:
        con.execute("delete from ops.validated_files")  # so that the next gate checks rows
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from kubeledger.quality_gate import run_quality_gate\n"
        f"validations = run_quality_gate(Path({str(tmp_path / 'ledger.duckdb')!r}))\n"
        "print(sum(v.rows_checked for v in validations))\n"
        "print(sorted(m for m in ('great_expectations', 'pandas') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    checked, imported = done.stdout.splitlines()
    assert int(checked) > 0  # the child ran the suites on rows, with GX
    assert imported == "[]"


def _killed(*_args):
    """A gate process killed (as the kernel's out-of-memory killer would)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_gate_process_that_dies_stops_the_build_with_a_clear_error(gate, monkeypatch):
    from kubeledger import quality_gate

    monkeypatch.setattr(quality_gate, "_validate_and_record", _killed)
    with pytest.raises(quality_gate.QualityGateAborted, match="process ended without a result"):
        gate({})
    result = CliRunner().invoke(main, ["build"])
    assert result.exit_code == 1
    assert "Error: the quality gate's process ended without a result" in result.output


def test_dbt_parses_beside_the_gate_and_the_build_uses_that_parse(gate, monkeypatch):
    """The build parses the dbt project while the gate's child process checks the rows and
    hands that parse to its dbt build; a failing gate still stops the build before dbt."""
    parsed, given = [], []
    monkeypatch.setattr(warehouse, "parse_dbt_project", lambda db: parsed.append(db) or "parse")

    def dbt(*_args, **kwargs):
        given.append(kwargs.get("manifest"))
        raise DbtRan

    monkeypatch.setattr(warehouse, "run_dbt", dbt)
    assert gate({}) is None
    assert len(parsed) == 1 and given == ["parse"]
    refused = gate({POD: lambda lines: row(lines, 1, ",1800.000000,", ",-1,")})
    assert refused is not None and "pod_usage_cpu_core_seconds is not negative" in str(refused)
    assert len(parsed) == 2 and given == ["parse"]  # parsed beside it, never built


def test_what_runs_beside_the_gate_fails_after_the_gate_s_verdict(gate, tmp_path):
    from kubeledger.quality_gate import run_quality_gate_alongside

    def broken():
        raise ValueError("the parse broke")

    db = tmp_path / "ledger.duckdb"
    assert gate({}) is None
    with pytest.raises(ValueError, match="the parse broke"):
        run_quality_gate_alongside(db, None, None, broken)
    assert run_quality_gate_alongside(db, None, None, lambda: 42)[1] == 42
    assert gate({POD: lambda lines: row(lines, 1, ",1800.000000,", ",-1,")}) is not None
    with pytest.raises(QualityGateError, match="is not negative"):
        run_quality_gate_alongside(db, None, None, broken)


def test_dbt_parses_the_project_while_another_process_holds_the_warehouse(tmp_path):
    """The parse beside the gate never opens the warehouse, which the gate's process holds."""
    import subprocess
    import sys

    from dbt.contracts.graph.manifest import Manifest

    db = tmp_path / "held.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(db)!r}); print('held', flush=True); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(duckdb.IOException, match="lock"):
            duckdb.connect(str(db)).close()  # the file is held
        manifest = warehouse.parse_dbt_project(db)
    finally:
        holder.communicate("")
    assert isinstance(manifest, Manifest)
    assert "model.kubeledger.int_pod_hours_allocated" in manifest.nodes


def test_frames_are_read_ahead_in_order_and_a_reading_failure_reaches_the_caller():
    from kubeledger.quality.validate import _read_ahead

    assert list(_read_ahead(iter(range(10)))) == list(range(10))

    def failing():
        yield from range(3)
        raise duckdb.IOException("disk gone")

    seen = []
    with pytest.raises(duckdb.IOException, match="disk gone"):
        for frame in _read_ahead(failing()):
            seen.append(frame)
    assert seen == [0, 1, 2]


def test_a_caller_that_stops_early_stops_the_reading_thread():
    import threading

    from kubeledger.quality.validate import _read_ahead

    read = []

    def frames():
        for frame in range(100):
            read.append(frame)
            yield frame

    ahead = _read_ahead(frames())
    assert [next(ahead), next(ahead)] == [0, 1]
    ahead.close()
    assert not [t for t in threading.enumerate() if t.name == "kubeledger-gate-reader"]
    assert len(read) <= 5  # one frame handed out, one waiting, one being read: not 100
