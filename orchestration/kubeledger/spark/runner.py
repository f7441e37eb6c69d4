"""Load a landing folder into Spark and build the project there with dbt-spark (either target:
the in-process `spark` session or the `spark_thrift` cluster)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubeledger.config import load_config
from kubeledger.load import LoadSummary
from kubeledger.paths import config_path
from kubeledger.spark.parquet_load import load_raw_parquet, write_config_parquet
from kubeledger.warehouse import run_dbt

TARGETS = ("spark", "spark_thrift")


def on_spark() -> bool:
    """True when KUBELEDGER_TARGET names a Spark target: the CLI's load, build, close,
    correct and verify then run on Spark."""
    return os.environ.get("KUBELEDGER_TARGET", "duckdb") in TARGETS


@dataclass(frozen=True)
class SparkWarehouse:
    """Where one Spark warehouse lives, and which profile target reaches it.

    `spark` (the in-process session): KUBELEDGER_SPARK_DIR, default warehouse/spark.
    `spark_thrift` (a cluster through its Thrift Server): KUBELEDGER_SPARK_CLUSTER_DIR,
    default .spark/ (the folder `make spark-up` uses; on a real cluster, shared storage).
    """

    root: Path
    target: str = "spark"

    @classmethod
    def from_env(cls) -> SparkWarehouse:
        target = os.environ.get("KUBELEDGER_TARGET", "spark")
        if target not in TARGETS:
            target = "spark"
        if target == "spark_thrift":
            root = os.environ.get("KUBELEDGER_SPARK_CLUSTER_DIR", ".spark")
        else:
            root = os.environ.get("KUBELEDGER_SPARK_DIR", "warehouse/spark")
        return cls(Path(root).resolve(), target)

    @property
    def is_cluster(self) -> bool:
        return self.target == "spark_thrift"

    @property
    def dbt_db(self) -> Path:
        """No DuckDB file is used on Spark; dbt's KUBELEDGER_DB only needs a value."""
        return self.root / "unused.duckdb"

    @property
    def parquet_root(self) -> Path:
        """The loader's Parquet: raw/<table>/ partitioned by day, config/<table>/."""
        return self.root / "parquet"

    @property
    def tables_dir(self) -> Path:
        """spark.sql.warehouse.dir: managed tables in <schema>.db/<table>/."""
        return self.root / ("warehouse" if self.is_cluster else "spark-warehouse")

    @property
    def copies_dir(self) -> Path:
        """The seals' write-once copies (outside the warehouse): KUBELEDGER_SEAL_COPY_DIR."""
        return Path(os.environ.get("KUBELEDGER_SEAL_COPY_DIR") or self.root / "seals").resolve()

    @property
    def exchange_dir(self) -> Path:
        """Where Spark writes query results as Parquet for the close to read."""
        return self.root / "exchange"

    def environment(self) -> dict[str, str]:
        folder = "KUBELEDGER_SPARK_CLUSTER_DIR" if self.is_cluster else "KUBELEDGER_SPARK_DIR"
        return {"KUBELEDGER_TARGET": self.target, folder: str(self.root)}


@contextmanager
def _spark_target(warehouse: SparkWarehouse) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in warehouse.environment()}
    os.environ.update(warehouse.environment())
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def register_statements(table: dict) -> list[str]:
    """The statements that (re)create one Parquet table in Spark (as the
    register_parquet_tables macro does, which the in-process session target runs)."""
    name = f"`{table['schema']}`.`{table['name']}`"
    columns = ", ".join(
        f"`{column['name']}` {column['type']}" for column in table.get("columns", [])
    )
    create = f"create table {name}" + (f" ({columns})" if columns else "") + " using parquet"
    if table.get("partitioned_by"):
        create += f" partitioned by (`{table['partitioned_by']}`)"
    create += f" location '{table['location']}'"
    statements = [f"drop table if exists {name}", create]
    if table.get("partitioned_by"):
        statements.append(f"alter table {name} recover partitions")
    return statements


def _register(warehouse: SparkWarehouse, tables: list[dict]) -> None:
    """Register the tables in Spark's metastore. On a cluster only the tables whose files
    changed (or that Spark does not have) are recreated: each statement is a round trip to
    the Thrift Server."""
    if warehouse.is_cluster:
        from kubeledger.spark.connection import SparkSQL

        with SparkSQL.from_env(warehouse.exchange_dir) as spark:
            present: dict[str, list[str]] = {}
            for table in tables:
                schema = table["schema"]
                if schema not in present:
                    spark.execute(f"create schema if not exists `{schema}`")
                    present[schema] = spark.tables(schema)
                if table.get("changed", True) or table["name"] not in present[schema]:
                    for statement in register_statements(table):
                        spark.execute(statement)
        return
    tables = [{k: v for k, v in table.items() if k != "changed"} for table in tables]
    with _spark_target(warehouse):
        run_dbt(
            ["run-operation", "register_parquet_tables", "--args", json.dumps({"tables": tables})],
            db_path=warehouse.dbt_db,
        )


def load_to_spark(
    landing: Path,
    warehouse: SparkWarehouse | None = None,
    *,
    config: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> LoadSummary:
    """Load `landing` (idempotent, as `kubeledger load`) into the raw Parquet tables, partitioned
    by day, write the configuration, and register both in Spark under the same names."""
    warehouse = warehouse or SparkWarehouse.from_env()
    warehouse.root.mkdir(parents=True, exist_ok=True)
    settings = load_config(config or config_path())
    summary, tables = load_raw_parquet(landing, warehouse.parquet_root, progress=progress)
    tables += write_config_parquet(settings, warehouse.parquet_root)
    _register(warehouse, tables)
    return summary


def build_on_spark(
    warehouse: SparkWarehouse | None = None,
    *,
    config: Path | None = None,
    dbt_vars: dict[str, Any] | None = None,
    select: str | None = None,
    full_refresh: bool = False,
    data_tests: bool = True,
    progress: Callable[[str], None] | None = None,
) -> None:
    """`kubeledger build` on Spark: write the configuration (config tables), then dbt build
    (seeds, models and data tests; unit tests run on DuckDB only). `data_tests=False` builds
    without the data tests."""
    warehouse = warehouse or SparkWarehouse.from_env()
    settings = load_config(config or config_path())
    _register(warehouse, write_config_parquet(settings, warehouse.parquet_root))
    args = ["build", "--exclude", "resource_type:unit_test"]
    if not data_tests:
        args.append("resource_type:test")
    if full_refresh:
        args.append("--full-refresh")
    if select:
        args += ["--select", select]
    with _spark_target(warehouse):
        run_dbt(args, db_path=warehouse.dbt_db, dbt_vars=dbt_vars, progress=progress)


def export_schema(schema: str, out_dir: Path, warehouse: SparkWarehouse | None = None) -> Path:
    """Write every table and view of a Spark schema to `out_dir/<name>/` as Parquet."""
    warehouse = warehouse or SparkWarehouse.from_env()
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    arguments = json.dumps({"schema": schema, "location": str(out_dir)})
    with _spark_target(warehouse):
        run_dbt(
            ["run-operation", "export_schema_to_parquet", "--args", arguments],
            db_path=warehouse.dbt_db,
        )
    return out_dir


def table_parquet_sql(warehouse: SparkWarehouse, schema: str, name: str) -> str:
    """A DuckDB table expression reading a Spark-managed table's Parquet files (partition
    columns, such as usage_date of the day-incremental models, come from the folder names)."""
    folder = warehouse.tables_dir / f"{schema}.db" / name
    pattern = str(folder / "**" / "*.parquet").replace("'", "''")
    return f"read_parquet('{pattern}', hive_partitioning = true)"
