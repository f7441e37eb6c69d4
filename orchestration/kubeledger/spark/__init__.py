"""The same dbt project on Spark (SPEC §15): raw tables as Parquet, dbt-spark builds the rest.

Two profile targets reach Spark: `spark` runs it in-process (PySpark session, local mode; the
tests' fallback) and `spark_thrift` talks to a cluster through its Thrift Server (`make
spark-up` starts one on this machine: cluster.py).

- `load_to_spark` loads a landing folder with the DuckDB loader in memory (no DuckDB file)
  and writes the raw tables as Parquet partitioned by day, then registers them and the
  configuration tables in Spark (parquet_load.py, `dbt run-operation register_parquet_tables`);
- `build_on_spark` seeds and builds the project there with dbt-spark;
- close.py closes, seals, corrects and verifies a month on the cluster (per-month sealed tables
  Spark refuses to create twice; the same hashes and copies as on DuckDB).

    KUBELEDGER_TARGET=spark_thrift kubeledger load demo/landing
    KUBELEDGER_TARGET=spark_thrift kubeledger build
    KUBELEDGER_TARGET=spark_thrift kubeledger close --month 2026-10 --as-of 2026-11-20
"""

from kubeledger.spark.runner import (
    SparkWarehouse,
    build_on_spark,
    export_schema,
    load_to_spark,
    on_spark,
    table_parquet_sql,
)

__all__ = [
    "SparkWarehouse",
    "build_on_spark",
    "export_schema",
    "load_to_spark",
    "on_spark",
    "table_parquet_sql",
]
