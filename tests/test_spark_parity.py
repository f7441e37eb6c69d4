"""The same project on Spark gives the same marts as on DuckDB (SPEC §1.6, §15).

A small generated fleet (four clusters: AWS CUR 2.0, Google Cloud, Azure and an on-prem rate
card) is loaded once (the DuckDB loader, into the Spark warehouse's scratch DuckDB file), then
built on local Spark in a child process (dbt-spark's `session` method; the child's JVM and
Derby metastore end with it) and on DuckDB from a copy of the same load, both as of
2026-11-20. Spark's marts are exported to Parquet (`export_schema`) and read here with DuckDB.

Every mart must hold the same rows on both engines: the same columns, the same row count, and
row for row (rows paired by sorting on every non-double column) equal values: strings, dates,
booleans, integers and decimal money exactly, doubles (the daily ledger amounts, SPEC §1.2) to
a relative 1e-9, far inside a cent. Run metadata (`loaded_at`, `attributed_at`) differs by
design and is left out.

The sealed bill is written by Python on DuckDB only (close/seal.py), so Spark has none: the
draft October lines of Spark's fct_bill_lines_monthly must equal, line for line and to the
cent, the bill `kubeledger close` seals on DuckDB for October as of the same date.

On Spark the data tests run with `make test-spark` (KUBELEDGER_SPARK_TESTS=full); `make test`
builds models only there, to stay within a few minutes. Unit tests run on DuckDB only.
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

from kubeledger.close.closer import DbtProject, close_month
from kubeledger.generate import generate_fleet
from tests.warehouse_builder import build_warehouse

pytestmark = pytest.mark.spark

AS_OF = "2026-11-20"
MONTH = "2026-10"
RUN_METADATA = ("loaded_at", "attributed_at", "sealed_at")
DOUBLE_TYPES = ("DOUBLE", "FLOAT", "REAL")
NESTED = ("MAP(", "[]", "STRUCT(")


def _spark_missing() -> str | None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java: local Spark (PySpark) needs a Java 17 runtime on PATH or JAVA_HOME"
    for module in ("pyspark", "dbt.adapters.spark"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: pip install -e '.[dev]' installs dbt-spark"
    return None


def _run(command: list[str], env: dict[str, str], log: Path) -> None:
    with log.open("a") as out:
        done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        pytest.fail(f"the Spark build failed (exit {done.returncode}); log {log}:\n{tail}")


# One child process (one JVM and Derby metastore, ended with it): load, build, export.
SPARK_SCRIPT = """
import json, sys
from pathlib import Path
from kubeledger.spark import build_on_spark, export_schema, load_to_spark
landing, marts, data_tests = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "full"
load_to_spark(landing)
build_on_spark(dbt_vars=json.loads(sys.argv[4]), data_tests=data_tests)
export_schema("marts", marts)
"""


@pytest.fixture(scope="module")
def engines(tmp_path_factory) -> tuple[Path, Path]:
    """(DuckDB warehouse, folder of Spark's marts as Parquet), built from the same load."""
    reason = _spark_missing()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("spark_parity")
    generate_fleet(root / "fleet", nodes=6, days=33, pods_per_node=4, clusters=4)
    landing, config = root / "fleet" / "landing", root / "fleet" / "kubeledger.yml"
    env = {
        **os.environ,
        "KUBELEDGER_CONFIG": str(config),
        "KUBELEDGER_SPARK_DIR": str(root / "spark"),
        "DBT_TARGET_PATH": str(root / "spark-target"),
        "DBT_LOG_PATH": str(root / "spark-logs"),
    }
    tests = os.environ.get("KUBELEDGER_SPARK_TESTS", "models")
    command = [sys.executable, "-c", SPARK_SCRIPT, str(landing), str(root / "marts"), tests]
    _run([*command, json.dumps({"as_of": AS_OF})], env, root / "spark.log")

    # DuckDB builds from a copy of the very load Spark's raw tables were exported from.
    duck = root / "duckdb"
    duck.mkdir()
    shutil.copy(root / "spark" / "landing.duckdb", duck / "kubeledger.duckdb")
    db = build_warehouse(duck, landing, config, dbt_vars={"as_of": AS_OF})
    return db, root / "marts"


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
    db, spark_dir = engines
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
        exported = sorted(path.name for path in spark_dir.iterdir() if path.is_dir())
        assert exported == marts
        problems = [problem for name in marts for problem in _compare(con, name, spark_dir)]
    assert problems == []


def test_the_marts_are_not_empty(engines):
    """A parity test over empty marts would prove nothing: the fleet fills the main ones."""
    db, _ = engines
    with duckdb.connect(str(db), read_only=True) as con:
        for mart in ("fct_pod_costs_daily", "fct_node_costs_daily", "fct_cluster_costs_daily"):
            (rows,) = con.execute(f"select count(*) from marts.{mart}").fetchone()
            assert rows > 0, mart


def test_sparks_october_draft_is_the_bill_sealed_on_duckdb(engines, tmp_path):
    db, spark_dir = engines
    sealed_db = tmp_path / "october.duckdb"  # not "sealed": a catalog would shadow the schema
    shutil.copy(db, sealed_db)
    project = DbtProject(target_path=tmp_path / "target", log_path=tmp_path / "logs")
    result = close_month(sealed_db, MONTH, dt.date.fromisoformat(AS_OF), project=project)
    assert result.bill.line_count > 0
    with duckdb.connect(str(sealed_db), read_only=True) as con:
        sealed = con.execute(
            "select cluster_id, cost_family, line_id, billed_cost "
            "from sealed.sealed_bill_lines where bill_month = ? order by all",
            [MONTH],
        ).fetchall()
        spark = _spark_relation(spark_dir / "fct_bill_lines_monthly")
        draft = con.execute(
            "select cluster_id, cost_family, line_id, cast(billed_cost as decimal(38, 3)) "
            f"from {spark} where bill_month = ? order by all",
            [MONTH],
        ).fetchall()
    assert draft == sealed
    assert sum((row[3] for row in draft), Decimal("0")) == result.bill.billed_cost
