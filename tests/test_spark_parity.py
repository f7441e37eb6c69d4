"""The same project on a Spark cluster gives the same marts and the same sealed bill as on
DuckDB (SPEC §1.6, §9, §15).

The test starts a Spark standalone cluster of its own (a master, two workers and the Spark
Thrift Server on 127.0.0.1, ports apart from `make spark-up`'s, under a temporary folder;
kubeledger/spark/cluster.py) and stops it by PID at the end, whatever happened. A small
generated fleet (four clusters: AWS CUR 2.0, Google Cloud, Azure and an on-prem rate card) is
then run through the `kubeledger` commands with KUBELEDGER_TARGET=spark_thrift, each in a
process of its own: `load` (raw Parquet partitioned by day), `build`, `close --month 2026-10`
(close models built on Spark, sealed in per-month tables) and `verify`; a second close (Spark
must refuse it) and a correction run in-process on the models as built, then a sealed line
is edited on Spark and `verify` must name it. The same landing folder is loaded and built on
DuckDB and closed there as of the same date.

Every mart must hold the same rows on both engines: the same columns, the same row count, and
row for row (rows paired by sorting on every non-double column) equal values: strings, dates,
booleans, integers and decimal money exactly, doubles (the daily ledger amounts, SPEC §1.2) to
a relative 1e-9, far inside a cent. Run metadata (`loaded_at`, `attributed_at`) differs by
design and is left out. The marts are compared as DuckDB has them before its seal: its bill
marts show the sealed store, Spark's show each month's draft lines (README, "Past one
machine"). The sealed bill on Spark must equal DuckDB's line for line and to the cent (every
column of its lines, slices and billing-line references, bill IDs included) and hash to the
same per-table digests.

`make test-spark` runs this file with Spark's data tests too (KUBELEDGER_SPARK_TESTS=full); a
plain `pytest` run builds models only on Spark; `make test` leaves it out (`-m "not spark"`:
6 to 10 minutes of a worker on two cores). Unit tests run on DuckDB only.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from kubeledger.close.closer import DbtProject, build_close_models, close_month
from kubeledger.generate import generate_fleet
from tests.warehouse_builder import build_warehouse

pytestmark = pytest.mark.spark

AS_OF = "2026-11-20"
MONTH = "2026-10"
RUN_METADATA = ("loaded_at", "attributed_at", "sealed_at")
DOUBLE_TYPES = ("DOUBLE", "FLOAT", "REAL")
NESTED = ("MAP(", "[]", "STRUCT(")
MASTER_PORT, THRIFT_PORT = 7178, 10012  # apart from `make spark-up` (7177, 10011)
SEALED_ROWS = {
    "sealed_bill_lines": "line_id",
    "sealed_bill_clusters": "cluster_id, cost_family",
    "sealed_billing_line_refs": "cluster_id, cost_family, billing_line_id",
}


def _spark_missing() -> str | None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java: the Spark cluster needs a Java 17 runtime on PATH or JAVA_HOME"
    for module in ("pyspark", "dbt.adapters.spark", "pyhive"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: pip install -e '.[dev]' installs dbt-spark"
    return None


KUBELEDGER = [sys.executable, "-c", "from kubeledger.cli import main; main()"]


def _kubeledger(args: list[str], env: dict[str, str], log: Path) -> subprocess.CompletedProcess:
    with log.open("a") as out:
        out.write(f"\n$ kubeledger {' '.join(args)}\n")
        out.flush()
        return subprocess.run(
            [*KUBELEDGER, *args], env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )


def _tail(log: Path) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-40:])


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """(DuckDB warehouse closed for October, folder of Spark's marts and sealed tables as
    Parquet, the second close's outcome, verify's outcome, the Spark copy folder)."""
    reason = _spark_missing()
    if reason:
        pytest.skip(reason)
    from kubeledger.spark.cluster import ClusterSettings, start_cluster, status, stop_cluster

    root = tmp_path_factory.mktemp("spark_parity")
    generate_fleet(root / "fleet", nodes=6, days=33, pods_per_node=4, clusters=4)
    landing, config = root / "fleet" / "landing", root / "fleet" / "kubeledger.yml"
    settings = ClusterSettings(
        root=root / "cluster", master_port=MASTER_PORT, thrift_port=THRIFT_PORT
    )
    env = {
        **os.environ,
        "KUBELEDGER_TARGET": "spark_thrift",
        "KUBELEDGER_CONFIG": str(config),
        "KUBELEDGER_SPARK_CLUSTER_DIR": str(settings.root),
        "KUBELEDGER_SPARK_THRIFT_PORT": str(THRIFT_PORT),
        "KUBELEDGER_AS_OF": AS_OF,
        "DBT_TARGET_PATH": str(root / "spark-target"),
        "DBT_LOG_PATH": str(root / "spark-logs"),
        # no DuckDB file is the Spark commands' business: none may appear here
        "KUBELEDGER_DB": str(root / "no-duckdb" / "kubeledger.duckdb"),
    }
    log = root / "spark.log"
    try:
        start_cluster(settings)
        for args in (["load", str(landing)], ["build"]):
            if args == ["build"] and os.environ.get("KUBELEDGER_SPARK_TESTS") != "full":
                args = [
                    "spark",
                    "build",
                    "--skip-data-tests",
                    "--vars",
                    json.dumps({"as_of": AS_OF}),
                ]
            done = _kubeledger(args, env, log)
            if done.returncode != 0:
                pytest.fail(f"kubeledger {args[0]} on Spark failed; log {log}:\n{_tail(log)}")
        close = ["close", "--month", MONTH, "--as-of", AS_OF]
        first = _kubeledger(close, env, log)
        if first.returncode != 0:
            pytest.fail(f"kubeledger close on Spark failed; log {log}:\n{_tail(log)}")
        spark_dir = _export_from_spark(settings, root / "spark-out")
        with pytest.MonkeyPatch.context() as patch:
            for key in ("KUBELEDGER_TARGET", "KUBELEDGER_SPARK_CLUSTER_DIR"):
                patch.setenv(key, env[key])
            patch.setenv("KUBELEDGER_SPARK_THRIFT_PORT", str(THRIFT_PORT))
            # The second close skips rebuilding the close models (minutes on Spark): the
            # refusal is the engine's, when the seal creates the month's first table.
            second = _close_again()
            correction = _correct_a_moved_cent(settings)
        verified = _kubeledger(["verify"], env, log)
        tampered_log = root / "tampered-verify.log"
        _add_a_cent_on_spark(settings)
        tampered = _kubeledger(["verify"], env, tampered_log)
    finally:
        stop_cluster(settings)
        left = {name: pid for name, pid in status(settings).items() if pid}
        assert left == {}, f"Spark processes left running: {left}"
        # nor any executor: every JVM of this cluster has its conf folder on its class path
        assert _processes_mentioning(str(settings.root)) == []

    duck = root / "duckdb"
    duck.mkdir()
    db = build_warehouse(duck, landing, config, dbt_vars={"as_of": AS_OF})
    project = DbtProject(target_path=root / "duck-target", log_path=root / "duck-logs")
    as_of = dt.date.fromisoformat(AS_OF)
    build_close_models(db, MONTH, as_of, project=project)  # as the Spark close built them
    # The bill marts on DuckDB show the sealed store, Spark's show drafts: compare the marts
    # as they are before the seal ("draft"), the sealed bills after it.
    draft = root / "draft.duckdb"
    shutil.copy(db, draft)
    close_month(db, MONTH, as_of, project=project, run_dbt=False)
    return {
        "db": db,
        "draft": draft,
        "spark": spark_dir,
        "second": second,
        "verify": (verified.returncode, _tail(log)),
        "tampered": (tampered.returncode, tampered_log.read_text(errors="replace")),
        "copies": settings.root / "seals",
        "correction": correction,
        "duckdb_files": sorted(str(p) for p in (root / "no-duckdb").glob("**/*")),
    }


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in command and "pytest" not in command:
            found.append(f"{cmdline.parent.name}: {command[:200]}")
    return found


def _export_from_spark(settings, out: Path) -> Path:
    """Every mart and the sealed tables of Spark, read through the Thrift Server, as
    Parquet folders `out/<name>/` (a DuckDB file per table would do as well)."""
    from kubeledger.spark.connection import SparkSQL

    out.mkdir(parents=True)
    con = duckdb.connect()
    with SparkSQL("127.0.0.1", THRIFT_PORT, "kubeledger", settings.root / "exchange") as spark:
        names = [("marts", name) for name in spark.tables("marts")]
        names += [("sealed", name) for name in spark.tables("sealed")]
        for schema, name in names:
            (out / name).mkdir()
            if spark.to_duckdb(con, f"select * from {schema}.{name}", "exported"):
                target = str(out / name / "data.parquet")
                con.execute(f"copy exported to '{target}' (format parquet)")
                con.execute("drop table exported")
    con.close()
    return out


def _close_again() -> str:
    from kubeledger.close.seal import AlreadySealedError
    from kubeledger.spark.close import close_month_on_spark

    try:
        close_month_on_spark(MONTH, dt.date.fromisoformat(AS_OF), run_dbt=False)
    except AlreadySealedError as refusal:
        return f"AlreadySealedError: {refusal}"
    return "sealed a second time"


def _correct_a_moved_cent(settings):
    """Move a cent between two lines of one slice in Spark's close model (as a restated day
    re-allocated could), then `kubeledger correct` on Spark without rebuilding the model."""
    from kubeledger.spark.close import correct_month_on_spark
    from kubeledger.spark.connection import SparkSQL

    model = "intermediate.int_bill_lines_allocated"
    with SparkSQL("127.0.0.1", THRIFT_PORT, "kubeledger", settings.root / "exchange") as spark:
        (first, _), (second, _) = spark.rows(
            f"select line_id, billed_cost from {model} where bill_month = '{MONTH}' "
            "and cluster_id = 'eks-prod' and cost_family = 'compute' order by line_id limit 2"
        )
        described = spark.rows(f"describe {model}")
        columns = list(dict.fromkeys(row[0] for row in described if row[0] and row[0][0] != "#"))
        moved = (
            f"case when line_id = '{first}' then billed_cost + 0.01 "
            f"when line_id = '{second}' then billed_cost - 0.01 else billed_cost end"
        )
        select = ", ".join(
            f"{moved} as billed_cost" if name == "billed_cost" else name for name in columns
        )
        spark.execute(f"create table intermediate.moved as select {select} from {model}")
        spark.execute(f"insert overwrite table {model} select * from intermediate.moved")
        spark.execute("drop table intermediate.moved")
    result = correct_month_on_spark(MONTH, dt.date.fromisoformat(AS_OF), run_dbt=False)
    return result.correction, (first, second)


def _add_a_cent_on_spark(settings) -> None:
    """Edit the sealed October bill on Spark as a client with write access could: one cent
    more on the first line (by line ID)."""
    from kubeledger.spark.connection import SparkSQL

    table = f"sealed.sealed_bill_lines_{MONTH.replace('-', '_')}"
    with SparkSQL("127.0.0.1", THRIFT_PORT, "kubeledger", settings.root / "exchange") as spark:
        (first,) = spark.rows(f"select min(line_id) from {table}")[0]
        columns = [row[0] for row in spark.rows(f"describe {table}") if row[0]]
        select = ", ".join(
            f"case when line_id = '{first}' then billed_cost + 0.01 else billed_cost end "
            "as billed_cost"
            if name == "billed_cost"
            else name
            for name in columns
        )
        spark.execute(f"create table sealed.tampered as select {select} from {table}")
        spark.execute(f"insert overwrite table {table} select * from sealed.tampered")
        spark.execute("drop table sealed.tampered")


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.execute(f"describe select * from {relation}").fetchall()}


def _spark_relation(folder: Path) -> str | None:
    files = sorted(folder.glob("*.parquet"))
    if not files:
        return None
    return f"read_parquet('{folder.as_posix()}/*.parquet')"


def _compare(con: duckdb.DuckDBPyConnection, name: str, spark_dir: Path) -> list[str]:
    """What differs between DuckDB's marts.<name> and Spark's; empty when they are equal."""
    duck_columns = _columns(con, f"marts.{name}")
    columns = {
        column: kind for column, kind in duck_columns.items() if not column.endswith(RUN_METADATA)
    }
    (duck_rows,) = con.execute(f"select count(*) from marts.{name}").fetchone()
    spark = _spark_relation(spark_dir / name)
    if spark is None:
        return [] if duck_rows == 0 else [f"{name}: {duck_rows} rows on DuckDB, none on Spark"]
    spark_columns = _columns(con, spark)
    missing = sorted(set(columns) - set(spark_columns))
    if missing:
        return [f"{name}: columns missing on Spark: {', '.join(missing)}"]
    (spark_rows,) = con.execute(f"select count(*) from {spark}").fetchone()
    if spark_rows != duck_rows:
        return [f"{name}: {duck_rows} rows on DuckDB, {spark_rows} on Spark"]

    keys, doubles = [], []
    for column, kind in columns.items():
        quoted = f'"{column}"'
        if kind in DOUBLE_TYPES:
            doubles.append((quoted, f"cast({quoted} as double)"))
        elif any(marker in kind for marker in NESTED):
            keys.append((f"cast({quoted} as varchar)", f"cast({quoted} as varchar)"))
        else:
            keys.append((quoted, f"cast({quoted} as {kind})"))
    order = [duck for duck, _ in keys] + [f"round({duck}, 4)" for duck, _ in doubles]
    order_spark = [spark_expr for _, spark_expr in keys] + [
        f"round({spark_expr}, 4)" for _, spark_expr in doubles
    ]

    def side(source: str, expressions: list[str], ordering: list[str]) -> str:
        select = ", ".join(f"{expr} as c{index}" for index, expr in enumerate(expressions))
        return (
            f"select row_number() over (order by {', '.join(ordering) or '1'}) as rn, {select} "
            f"from {source}"
        )

    duck_side = side(f"marts.{name}", [d for d, _ in keys] + [d for d, _ in doubles], order)
    spark_side = side(spark, [s for _, s in keys] + [s for _, s in doubles], order_spark)
    conditions = [f"d.c{i} is distinct from s.c{i}" for i in range(len(keys))]
    for offset in range(len(doubles)):
        i = len(keys) + offset
        conditions.append(
            f"((d.c{i} is null) <> (s.c{i} is null) or "
            f"abs(d.c{i} - s.c{i}) > 1e-9 * greatest(1.0, abs(d.c{i})))"
        )
    if not conditions:
        return []
    differing = con.execute(
        f"select d.*, s.* from ({duck_side}) as d full join ({spark_side}) as s using (rn) "
        f"where {' or '.join(conditions)} order by rn limit 3"
    ).fetchall()
    if not differing:
        return []
    names = [column for column, _ in keys] + [column for column, _ in doubles]
    return [
        f"{name}: rows differ (columns {names}); first: DuckDB / Spark {row}" for row in differing
    ]


def test_every_mart_is_the_same_on_spark(engines):
    db, spark_dir = engines["draft"], engines["spark"]
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        marts = [
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables "
                "where table_schema = 'marts' order by table_name"
            ).fetchall()
        ]
        assert "fct_pod_costs_daily" in marts and "fct_bill_lines_monthly" in marts
        exported = sorted(
            path.name for path in spark_dir.iterdir() if path.is_dir() and path.name in marts
        )
        assert exported == marts
        problems = [problem for name in marts for problem in _compare(con, name, spark_dir)]
    assert problems == []


def test_the_marts_are_not_empty(engines):
    """A parity test over empty marts would prove nothing: the fleet fills the main ones."""
    with duckdb.connect(str(engines["db"]), read_only=True) as con:
        for mart in ("fct_pod_costs_daily", "fct_node_costs_daily", "fct_cluster_costs_daily"):
            (rows,) = con.execute(f"select count(*) from marts.{mart}").fetchone()
            assert rows > 0, mart


def test_the_bill_sealed_on_spark_is_the_bill_sealed_on_duckdb(engines):
    """Line for line, to the cent: every column of the sealed lines, slices and billing-line
    references (bill IDs are content hashes, so they agree too), in per-month Spark tables."""
    spark_dir = engines["spark"]
    suffix = MONTH.replace("-", "_")
    with duckdb.connect(str(engines["db"]), read_only=True) as con:
        (bill_id, billed, target) = con.execute(
            "select bill_id, billed_cost, target_cost from sealed.sealed_bills "
            "where bill_month = ?",
            [MONTH],
        ).fetchone()
        for table, key in SEALED_ROWS.items():
            columns = [name for name in _columns(con, f"sealed.{table}")]
            select = ", ".join(f'"{name}"' for name in columns)
            duck = con.execute(
                f"select {select} from sealed.{table} where bill_month = ? order by {key}",
                [MONTH],
            ).fetchall()
            spark = _spark_relation(spark_dir / f"{table}_{suffix}")
            assert spark is not None, f"no {table}_{suffix} on Spark"
            on_spark = con.execute(f"select {select} from {spark} order by {key}").fetchall()
            assert len(duck) > 0, table
            assert on_spark == duck, table
        spark_bill = con.execute(
            f"select bill_id, billed_cost, target_cost "
            f"from {_spark_relation(spark_dir / f'sealed_bills_{suffix}')}"
        ).fetchall()
        lines = con.execute(
            f"select billed_cost from {_spark_relation(spark_dir / f'sealed_bill_lines_{suffix}')}"
        ).fetchall()
    assert spark_bill == [(bill_id, billed, target)]
    assert sum((row[0] for row in lines), Decimal("0")) == target


def test_the_spark_seal_hashes_as_on_duckdb(engines):
    """The copy's manifest on Spark states, per table, the same row digests as DuckDB's (the
    bill row itself differs only by sealed_at)."""
    db = engines["db"]
    with duckdb.connect(str(db), read_only=True) as con:
        (bill_id,) = con.execute(
            "select bill_id from sealed.sealed_bills where bill_month = ?", [MONTH]
        ).fetchone()
    duck_manifest = db.parent / f"{db.name}.seals" / MONTH / bill_id / "manifest.json"
    spark_manifest = engines["copies"] / MONTH / bill_id / "manifest.json"
    duck_tables = json.loads(duck_manifest.read_text())["tables"]
    spark_tables = json.loads(spark_manifest.read_text())["tables"]
    for table in SEALED_ROWS:
        assert spark_tables[table]["rows"] == duck_tables[table]["rows"] > 0
        assert spark_tables[table]["rows_sha256"] == duck_tables[table]["rows_sha256"], table


def test_the_spark_commands_write_no_duckdb_warehouse(engines):
    # the close on Spark once published a serving copy of whatever DuckDB file KUBELEDGER_DB
    # named (another test's warehouse, in `make test`)
    assert engines["duckdb_files"] == []


def test_a_second_close_is_refused_by_spark(engines):
    output = engines["second"]
    assert output.startswith("AlreadySealedError: Spark refused the seal"), output
    assert "TABLE_OR_VIEW_ALREADY_EXISTS" in output and "already sealed" in output, output


def test_a_correction_on_spark_is_new_tables(engines):
    """The two lines a cent moved between: +0.01 and -0.01, the bill itself unchanged."""
    correction, (first, second) = engines["correction"]
    assert correction is not None
    assert correction.correction_number == 1
    assert correction.changed_line_count == 2
    assert correction.delta_cost == Decimal("0.00")
    copy = engines["copies"] / MONTH / correction.correction_id / "correction_lines.parquet"
    with duckdb.connect() as con:
        deltas = con.execute(
            f"select line_id, delta_cost from read_parquet('{copy}') order by line_id"
        ).fetchall()
    assert deltas == sorted([(first, Decimal("0.01")), (second, Decimal("-0.01"))])


def test_the_spark_seals_verify(engines):
    """The bill and its correction: two artifacts, chained, each with its copy."""
    code, output = engines["verify"]
    assert code == 0, output
    assert "verified every month: 2 sealed artifact(s) (2026-10)" in output, output


def test_an_edit_on_spark_fails_verify(engines):
    """No engine stops a client with write access; verify must name the edited line."""
    code, output = engines["tampered"]
    assert code == 1, output
    assert "sealed_bill_lines" in output and "billed_cost is" in output, output
