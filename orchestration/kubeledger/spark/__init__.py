"""The same dbt project on Spark (SPEC §15): raw tables as Parquet, dbt-spark builds the rest.

Loading reuses the DuckDB loader: `load_to_spark` loads the landing folder into a scratch
DuckDB file (same checks, quarantine and restatements as on DuckDB), exports every `raw` and
`config` table to Parquet and registers each as an external table of the same name in Spark
(`dbt run-operation register_parquet_tables`), in the metastore of the profile's `spark`
target. `build_on_spark` then seeds and builds the project with dbt-spark.

    KUBELEDGER_SPARK_DIR=warehouse/spark  python -m kubeledger.spark load demo/landing
    KUBELEDGER_SPARK_DIR=warehouse/spark  python -m kubeledger.spark build

The `session` method runs Spark inside the process (PySpark, local mode); a cluster uses the
profile's `thrift` or `http` settings, with the Parquet under shared storage.
"""

from kubeledger.spark.runner import (
    SparkWarehouse,
    build_on_spark,
    export_schema,
    load_to_spark,
    table_parquet_sql,
)

__all__ = [
    "SparkWarehouse",
    "build_on_spark",
    "export_schema",
    "load_to_spark",
    "table_parquet_sql",
]
