"""One Spark SQL connection through the Thrift Server (PyHive), and the way rows cross over.

Rows go from Spark to Python as Parquet, never as text: `to_duckdb` has Spark write a query's
result with `insert overwrite directory … using parquet` under the warehouse's exchange folder
(shared storage on a real cluster) and reads it into a DuckDB table with its types (decimal
money keeps its scale, dates stay dates). Rows go the other way by `insert into … select …
from parquet.`<file>``, from the Parquet files a seal writes anyway (its copy).
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import duckdb

from kubeledger.load.sql import ident, lit


class SparkSQLError(RuntimeError):
    """Spark refused a statement; the message is Spark's."""


def spark_literal(value: object) -> str:
    """A Spark SQL literal (strings escape `\\` too: Spark reads backslash escapes)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


class SparkSQL:
    """Statements and queries on a Spark Thrift Server."""

    def __init__(self, host: str, port: int, user: str, exchange_dir: Path) -> None:
        from pyhive import hive

        self.exchange_dir = Path(exchange_dir)
        self._connection = hive.connect(host=host, port=port, username=user)

    @classmethod
    def from_env(cls, exchange_dir: Path) -> SparkSQL:
        return cls(
            os.environ.get("KUBELEDGER_SPARK_HOST", "127.0.0.1"),
            int(os.environ.get("KUBELEDGER_SPARK_THRIFT_PORT", "10011")),
            os.environ.get("KUBELEDGER_SPARK_USER", "kubeledger"),
            exchange_dir,
        )

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> SparkSQL:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def execute(self, sql: str) -> None:
        cursor = self._connection.cursor()
        try:
            cursor.execute(sql)
        except Exception as exc:  # PyHive raises thrift's and its own error types
            raise SparkSQLError(_message(exc)) from exc
        finally:
            cursor.close()

    def rows(self, sql: str) -> list[tuple]:
        cursor = self._connection.cursor()
        try:
            cursor.execute(sql)
            return cursor.fetchall()
        except Exception as exc:
            raise SparkSQLError(_message(exc)) from exc
        finally:
            cursor.close()

    def tables(self, schema: str) -> list[str]:
        """Names of the tables of `schema` (none when it does not exist)."""
        if schema not in {row[0] for row in self.rows("show schemas")}:
            return []
        return sorted(row[1] for row in self.rows(f"show tables in {schema}") if not row[2])

    def to_duckdb(self, con: duckdb.DuckDBPyConnection, query: str, table: str) -> bool:
        """Create DuckDB table `table` from a Spark query's rows; False (no table) when Spark
        wrote no file (an empty result may have none)."""
        folder = self.exchange_dir / uuid.uuid4().hex
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            target = spark_literal(str(folder))
            self.execute(f"insert overwrite directory {target} using parquet {query}")
            files = sorted(folder.glob("*.parquet"))
            if not files:
                return False
            con.execute(
                f"create or replace table {table} as select * from "
                f"read_parquet({lit(str(folder / '*.parquet'))})"
            )
            return True
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _message(exc: Exception) -> str:
    status = getattr(exc, "args", [None])[0]
    text = getattr(getattr(status, "status", None), "errorMessage", None)
    return str(text or exc)


def quoted(schema: str, name: str) -> str:
    return f"{ident(schema)}.{ident(name)}".replace('"', "`")
