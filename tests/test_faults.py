"""Fault tests on a small generated fleet (2 clusters, 6 nodes, 40 days): kill -9 during the
load, the build and the close, then a rerun equals a clean run; a sealed warehouse survives
tampering (verify fails, naming it) and a restated export of its month (references intact).

The commands run as `python -m kubeledger.cli` subprocesses, killed with SIGKILL when their
output reaches a given point; every warehouse is a copy of one loaded (or built, or sealed)
file, so the runs compared share their load metadata.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from kubeledger.generate import generate_fleet

pytestmark = pytest.mark.slow

MONTH = "2026-10"
AS_OF = "2026-11-10"
SEALED_TABLES = (
    "sealed_bills",
    "sealed_bill_clusters",
    "sealed_bill_lines",
    "sealed_billing_line_refs",
)
# run metadata (SPEC §1.3: byte for byte, run-metadata columns aside)
RUN_METADATA = {
    "sealed_at",
    "built_at",
    "checked_at",
    "run_id",
    "started_at",
    "finished_at",
    "_loaded_at",
    "loaded_at",
    "attributed_at",
}


def command(
    db: Path,
    config: Path,
    *args: str,
    kill_after: str | None = None,
    nth: int = 1,
    delay: float = 0.0,
) -> tuple[int, str]:
    """Run `kubeledger <args>`; with `kill_after`, SIGKILL it `delay` seconds after the nth
    output line holding that text. Returns (exit code, output)."""
    env = {
        **os.environ,
        "KUBELEDGER_DB": str(db),
        "KUBELEDGER_CONFIG": str(config),
        # every file loaded and dbt's own log on the output: the kill points are lines of it
        "KUBELEDGER_VERBOSE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "kubeledger.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    seen = 0
    for line in process.stdout:
        lines.append(line)
        if kill_after is not None and kill_after in line:
            seen += 1
            if seen == nth:
                time.sleep(delay)
                process.send_signal(signal.SIGKILL)
                break
    process.wait()
    process.stdout.close()
    return process.returncode, "".join(lines)


def copy_warehouse(source: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / source.name
    shutil.copy(source, target)
    seals = source.parent / f"{source.name}.seals"
    if seals.exists():
        shutil.copytree(seals, dest_dir / seals.name)
    return target


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> dict[str, Path]:
    """The fleet's landing files, and warehouses: loaded, built, sealed (each a saved copy)."""
    root = tmp_path_factory.mktemp("faults")
    generate_fleet(root / "fleet", clusters=2, nodes=6, days=40, pods_per_node=4)
    config = root / "fleet" / "kubeledger.yml"
    stages = {"config": config, "landing": root / "fleet" / "landing"}
    db = root / "work" / "kubeledger.duckdb"
    db.parent.mkdir()
    code, output = command(db, config, "load", str(stages["landing"]))
    assert code == 0, output
    stages["loaded"] = copy_warehouse(db, root / "loaded")
    code, output = command(db, config, "build")
    assert code == 0, output
    stages["built"] = copy_warehouse(db, root / "built")
    code, output = command(db, config, "close", "--month", MONTH, "--as-of", AS_OF)
    assert code == 0, output
    stages["sealed"] = copy_warehouse(db, root / "sealed")
    return stages


def tables(db: Path, schema: str) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = ? "
                "order by 1",
                [schema],
            ).fetchall()
        ]


def differences(left: Path, right: Path, schema: str, names: list[str]) -> dict[str, str]:
    """Per table, what differs between two warehouses, run metadata aside: rows of the exact
    columns (all but doubles) in one and not the other, both ways; and each double column's
    sum, within 1e-6 (SPEC §1.2: daily amounts are doubles, their invariants hold within
    0.000001; a double sum's last bits depend on the order threads add it up)."""
    found = {}
    with duckdb.connect() as con:
        con.execute(f"attach '{left}' as a (read_only)")
        con.execute(f"attach '{right}' as b (read_only)")
        for name in names:
            columns = [
                (column, data_type)
                for column, data_type in con.execute(
                    "select column_name, data_type from information_schema.columns where "
                    "table_catalog = 'a' and table_schema = ? and table_name = ? "
                    "order by ordinal_position",
                    [schema, name],
                ).fetchall()
                if column not in RUN_METADATA
            ]
            exact = ", ".join(f'"{c}"' for c, kind in columns if kind not in ("DOUBLE", "FLOAT"))
            doubles = [c for c, kind in columns if kind in ("DOUBLE", "FLOAT")]
            a, b = f'a."{schema}"."{name}"', f'b."{schema}"."{name}"'
            (count,) = con.execute(
                f"select (select count(*) from (select {exact} from {a} except all "
                f"select {exact} from {b})) + (select count(*) from (select {exact} from {b} "
                f"except all select {exact} from {a}))"
            ).fetchone()
            if count:
                found[name] = f"{count} rows"
                continue
            for column in doubles:
                (gap, size) = con.execute(
                    f'select abs(coalesce((select sum("{column}") from {a}), 0) '
                    f'- coalesce((select sum("{column}") from {b}), 0)), '
                    f'coalesce((select sum(abs("{column}")) from {a}), 0)'
                ).fetchone()
                # 1e-6 absolute, or the last bits of a sum as large as byte-seconds (1e20: an
                # ulp there is 16,384) added up in another order
                if gap > max(1e-6, size * 1e-12):
                    found[name] = f"sum({column}) differs by {gap} (of {size})"
    return found


def test_kill_during_load_then_a_rerun_equals_a_clean_load(fleet, tmp_path):
    db = tmp_path / "kubeledger.duckdb"
    code, output = command(
        db, fleet["config"], "load", str(fleet["landing"]), kill_after="loaded ", nth=5
    )
    assert code == -signal.SIGKILL, output
    code, output = command(db, fleet["config"], "load", str(fleet["landing"]))
    assert code == 0, output
    raw = [name for name in tables(fleet["loaded"], "raw") if name != "loaded_files"]
    assert differences(db, fleet["loaded"], "raw", raw) == {}
    with duckdb.connect(str(db), read_only=True) as con:
        files = con.execute("select count(*), count(distinct source_file) from raw.loaded_files")
        assert (
            files.fetchone()
            == duckdb.connect(str(fleet["loaded"]), read_only=True)
            .execute("select count(*), count(distinct source_file) from raw.loaded_files")
            .fetchone()
        )


@pytest.mark.parametrize("nth", [3, 40])
def test_kill_during_build_then_a_rerun_equals_a_clean_build(fleet, tmp_path, nth):
    db = copy_warehouse(fleet["loaded"], tmp_path)
    code, output = command(db, fleet["config"], "build", kill_after=" OK created ", nth=nth)
    assert code == -signal.SIGKILL, output
    code, output = command(db, fleet["config"], "build")
    assert code == 0, output
    marts = tables(fleet["built"], "marts")
    assert marts and tables(db, "marts") == marts
    assert differences(db, fleet["built"], "marts", marts) == {}


KILL_BEFORE_COMMIT = """
import os, signal, sys
from kubeledger.close import digest
real = digest.write_copy
def write_then_die(*args, **kwargs):
    real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
digest.write_copy = write_then_die
from kubeledger.cli import main
sys.exit(main())
"""
KILL_IN_CLOSE_MODELS = """
import os, signal, sys
from kubeledger import dbt_invoke
real = dbt_invoke.invoke_dbt
def invoke_and_die_mid_build(args, *, callbacks=(), label=None):
    if not (label or "").startswith("dbt build close"):
        return real(args, callbacks=callbacks, label=label)
    models = []
    def die_after_the_second_model(event):
        node = event.data.node_info if event.info.name == "NodeFinished" else None
        if node is not None and node.unique_id.startswith("model."):
            models.append(node.unique_id)
            if len(models) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
    return real(args, callbacks=[*callbacks, die_after_the_second_model], label=label)
dbt_invoke.invoke_dbt = invoke_and_die_mid_build
from kubeledger.cli import main
sys.exit(main())
"""
KILL_AFTER_COMMIT = """
import os, signal, sys
from kubeledger.close import digest
digest.finalize = lambda folder: os.kill(os.getpid(), signal.SIGKILL)
from kubeledger.cli import main
sys.exit(main())
"""


def close_with(db: Path, config: Path, script: str) -> int:
    env = {
        **os.environ,
        "KUBELEDGER_DB": str(db),
        "KUBELEDGER_CONFIG": str(config),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    return subprocess.run(
        [sys.executable, "-c", script, "close", "--month", MONTH, "--as-of", AS_OF],
        env=env,
        capture_output=True,
        check=False,
    ).returncode


def test_kill_during_the_close_models_then_a_rerun_seals_as_a_clean_close(fleet, tmp_path):
    db = copy_warehouse(fleet["built"], tmp_path)
    # killed in the middle of its dbt build of the close models, when the second model is
    # done (a fixed delay after the close started was no kill point: on a quiet machine the
    # whole close finished inside it)
    code = close_with(db, fleet["config"], KILL_IN_CLOSE_MODELS)
    assert code == -signal.SIGKILL
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from sealed.sealed_bills").fetchone() == (0,)
    code, output = command(db, fleet["config"], "close", "--month", MONTH, "--as-of", AS_OF)
    assert code == 0, output
    assert differences(db, fleet["sealed"], "sealed", list(SEALED_TABLES)) == {}
    code, output = command(db, fleet["config"], "verify")
    assert code == 0, output


def test_kill_inside_the_seal_before_its_commit_leaves_no_partial_seal(fleet, tmp_path):
    db = copy_warehouse(fleet["built"], tmp_path)
    assert close_with(db, fleet["config"], KILL_BEFORE_COMMIT) == -signal.SIGKILL
    with duckdb.connect(str(db), read_only=True) as con:
        for table in (*SEALED_TABLES, "seal_digests"):
            assert con.execute(f"select count(*) from sealed.{table}").fetchone() == (0,), table
    code, output = command(db, fleet["config"], "verify")
    assert code == 0, output  # nothing sealed, nothing to differ
    code, output = command(db, fleet["config"], "close", "--month", MONTH, "--as-of", AS_OF)
    assert code == 0, output
    assert differences(db, fleet["sealed"], "sealed", list(SEALED_TABLES)) == {}
    code, output = command(db, fleet["config"], "verify")
    assert code == 0 and "note: " in output and ".interrupted-" in output, output


def test_kill_after_the_seal_commits_is_finished_by_verify(fleet, tmp_path):
    db = copy_warehouse(fleet["built"], tmp_path)
    assert close_with(db, fleet["config"], KILL_AFTER_COMMIT) == -signal.SIGKILL
    assert differences(db, fleet["sealed"], "sealed", list(SEALED_TABLES)) == {}
    code, output = command(db, fleet["config"], "verify")
    assert code == 0 and "finalized the copy" in output, output
    code, output = command(db, fleet["config"], "close", "--month", MONTH, "--as-of", AS_OF)
    assert code == 2 and "already sealed" in output


TAMPERS = {
    "update": [
        "update sealed.sealed_bill_lines set billed_cost = billed_cost + 0.01 "
        "where line_id = (select min(line_id) from sealed.sealed_bill_lines)"
    ],
    "insert": [
        "insert into sealed.sealed_billing_line_refs select * replace ("
        "'forged-line' as billing_line_id) from sealed.sealed_billing_line_refs limit 1"
    ],
    "delete": [
        "delete from sealed.sealed_billing_line_refs where billing_line_id = "
        "(select min(billing_line_id) from sealed.sealed_billing_line_refs)"
    ],
    "drop_and_recreate": [
        "create table main.saved_slices as select * from sealed.sealed_bill_clusters",
        "drop table sealed.sealed_bill_clusters",
        "create table sealed.sealed_bill_clusters as select * from main.saved_slices",
    ],
    "move_one_dollar_inside_a_slice": [
        "create table main.pair as select line_id from sealed.sealed_bill_lines "
        "where cluster_id = (select min(cluster_id) from sealed.sealed_bill_lines) "
        "and cost_family = 'compute' and billed_cost >= 1 order by line_id limit 2",
        "update sealed.sealed_bill_lines set billed_cost = billed_cost + 1 "
        "where line_id = (select min(line_id) from main.pair)",
        "update sealed.sealed_bill_lines set billed_cost = billed_cost - 1 "
        "where line_id = (select max(line_id) from main.pair)",
    ],
}


def test_verify_passes_on_the_sealed_fleet(fleet):
    code, output = command(fleet["sealed"], fleet["config"], "verify")
    assert code == 0, output
    assert "verified every month: 1 sealed artifact(s) (2026-10)" in output


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_any_single_row_tamper_of_a_sealed_table_fails_verify(fleet, tmp_path, tamper):
    db = copy_warehouse(fleet["sealed"], tmp_path)
    with duckdb.connect(str(db)) as con:
        for statement in TAMPERS[tamper]:
            con.execute(statement)
    code, output = command(db, fleet["config"], "verify")
    assert code == 1, output
    assert "DIFFERS 2026-10" in output or "DIFFERS table sealed." in output
    code, output = command(db, fleet["config"], "bill", "--month", MONTH)
    assert code == 1 and "fails verification" in output


def test_restating_the_sealed_month_keeps_every_reference_and_the_seal(fleet, tmp_path):
    db = copy_warehouse(fleet["sealed"], tmp_path)
    landing = tmp_path / "landing"
    shutil.copytree(fleet["landing"], landing)
    (export,) = sorted((landing / "billing" / "aws" / "2026-10").glob("*.parquet"))
    restated = export.with_name("restated-" + export.name)
    with duckdb.connect() as con:
        # the whole period again, every cost up 1%: every earlier row of it is superseded
        bumped = ", ".join(
            f"cast(try_cast({column} as double) * 1.01 as varchar) as {column}"
            for column in ("line_item_unblended_cost", "line_item_net_unblended_cost")
        )
        con.execute(
            f"copy (select * replace ({bumped}) from read_parquet('{export}')) "
            f"to '{restated}' (format parquet)"
        )
    code, output = command(db, fleet["config"], "load", str(landing))
    assert code == 0, output
    assert "marked superseded: a sealed bill references them" in output
    code, output = command(db, fleet["config"], "build")
    assert code == 0, output
    with duckdb.connect(str(db), read_only=True) as con:
        from kubeledger.load.sql import BILLING_LINE_ID_SQL

        refs, dangling = con.execute(
            f"""
            select count(*), count(*) filter (where not exists (
                select 1 from raw.aws_cur2 where {BILLING_LINE_ID_SQL} = refs.billing_line_id
            ) and not exists (
                select 1 from raw.gcp_billing_export
                where {BILLING_LINE_ID_SQL} = refs.billing_line_id
            ))
            from sealed.sealed_billing_line_refs as refs
            """
        ).fetchone()
        assert refs > 0 and dangling == 0
        # staging reads the restatement only
        (files,) = con.execute(
            "select list(distinct source_file order by source_file) from marts.fct_billing_lines "
            "where provider = 'aws' and charge_date < date '2026-11-01'"
        ).fetchone()
        assert files == [restated.relative_to(landing).as_posix()]
    code, output = command(db, fleet["config"], "verify")
    assert code == 0, output
    assert differences(db, fleet["sealed"], "sealed", list(SEALED_TABLES)) == {}
