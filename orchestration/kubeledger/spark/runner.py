"""Load a landing folder into Spark and build the project there with dbt-spark."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubeledger.config import load_config
from kubeledger.load import LoadSummary, load_landing
from kubeledger.paths import config_path
from kubeledger.spark.export import export_tables
from kubeledger.warehouse import prepare_warehouse, run_dbt


@dataclass(frozen=True)
class SparkWarehouse:
    """Where one Spark warehouse lives (KUBELEDGER_SPARK_DIR, default warehouse/spark)."""

    root: Path

    @classmethod
    def from_env(cls) -> SparkWarehouse:
        return cls(Path(os.environ.get("KUBELEDGER_SPARK_DIR", "warehouse/spark")).resolve())

    @property
    def scratch_db(self) -> Path:
        """The DuckDB file the loader fills; its raw and config tables are exported."""
        return self.root / "landing.duckdb"

    @property
    def parquet_root(self) -> Path:
        return self.root / "parquet"

    @property
    def tables_dir(self) -> Path:
        """spark.sql.warehouse.dir: managed tables in <schema>.db/<table>/."""
        return self.root / "spark-warehouse"

    def environment(self) -> dict[str, str]:
        return {"KUBELEDGER_TARGET": "spark", "KUBELEDGER_SPARK_DIR": str(self.root)}


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


def _register(warehouse: SparkWarehouse, tables: list[dict[str, str]]) -> None:
    with _spark_target(warehouse):
        run_dbt(
            ["run-operation", "register_parquet_tables", "--args", json.dumps({"tables": tables})],
            db_path=warehouse.scratch_db,
        )


def _export_and_register(warehouse: SparkWarehouse, schemas: tuple[str, ...]) -> None:
    tables = export_tables(warehouse.scratch_db, warehouse.parquet_root, schemas)
    _register(warehouse, tables)


def load_to_spark(
    landing: Path,
    warehouse: SparkWarehouse | None = None,
    *,
    config: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> LoadSummary:
    """Load `landing` (idempotent, as `kubeledger load`), then put every raw and config table
    into Spark as a Parquet table of the same schema and name."""
    warehouse = warehouse or SparkWarehouse.from_env()
    warehouse.root.mkdir(parents=True, exist_ok=True)
    prepare_warehouse(warehouse.scratch_db, load_config(config or config_path()))
    summary = load_landing(warehouse.scratch_db, landing, progress=progress)
    _export_and_register(warehouse, ("raw", "config"))
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
    prepare_warehouse(warehouse.scratch_db, load_config(config or config_path()))
    _export_and_register(warehouse, ("config",))
    args = ["build", "--exclude", "resource_type:unit_test"]
    if not data_tests:
        args.append("resource_type:test")
    if full_refresh:
        args.append("--full-refresh")
    if select:
        args += ["--select", select]
    with _spark_target(warehouse):
        run_dbt(args, db_path=warehouse.scratch_db, dbt_vars=dbt_vars, progress=progress)


def export_schema(schema: str, out_dir: Path, warehouse: SparkWarehouse | None = None) -> Path:
    """Write every table and view of a Spark schema to `out_dir/<name>/` as Parquet."""
    warehouse = warehouse or SparkWarehouse.from_env()
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    arguments = json.dumps({"schema": schema, "location": str(out_dir)})
    with _spark_target(warehouse):
        run_dbt(
            ["run-operation", "export_schema_to_parquet", "--args", arguments],
            db_path=warehouse.scratch_db,
        )
    return out_dir


def table_parquet_sql(warehouse: SparkWarehouse, schema: str, name: str) -> str:
    """A DuckDB table expression reading a Spark-managed table's Parquet files (partition
    columns, such as usage_date of the day-incremental models, come from the folder names)."""
    folder = warehouse.tables_dir / f"{schema}.db" / name
    pattern = str(folder / "**" / "*.parquet").replace("'", "''")
    return f"read_parquet('{pattern}', hive_partitioning = true)"
