"""Resources: the warehouse (DuckDB file, configuration, landing folder, as-of date) and dbt.

Every field defaults to the environment the CLI uses (`KUBELEDGER_DB`, `KUBELEDGER_CONFIG`,
`KUBELEDGER_LANDING`, `KUBELEDGER_AS_OF`), so the UI, `kubeledger` and the tests agree on which
warehouse they mean; each can be set per run in the launchpad.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
from dagster import Backoff, ConfigurableResource, Jitter, RetryPolicy
from dagster_dbt import DbtCliResource
from pydantic import Field

from kubeledger.config import Config, load_config
from kubeledger.dagster.dbt_project import dbt_project
from kubeledger.dagster.ops_tables import ensure_ops_schema
from kubeledger.paths import PROFILES_DIR, config_path, warehouse_path

# Every op that writes the DuckDB file runs in this pool; its limit is 1 (dagster.yaml).
WAREHOUSE_POOL = "kubeledger_warehouse"
# ...and retries with backoff when the file is held outside Dagster (a `kubeledger` command):
# 4 attempts over about 7 minutes, 60s, 120s, 240s (+/- jitter) apart. Refusals a retry cannot
# fix (a blocked close, a seal that fails verification) raise Failure(allow_retries=False).
WAREHOUSE_RETRY = RetryPolicy(
    max_retries=3, delay=60, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS
)
LANDING_ENV = "KUBELEDGER_LANDING"
AS_OF_ENV = "KUBELEDGER_AS_OF"


def _absolute(text: str) -> Path:
    path = Path(text)
    return path if path.is_absolute() else Path.cwd() / path


class WarehouseResource(ConfigurableResource):
    """The DuckDB warehouse the assets write, and the inputs they read."""

    db_path: str | None = Field(
        default=None,
        description="DuckDB file (default: KUBELEDGER_DB, else warehouse/kubeledger.duckdb).",
    )
    config_path: str | None = Field(
        default=None,
        description="kubeledger.yml (default: KUBELEDGER_CONFIG, else kubeledger.yml).",
    )
    landing_dir: str | None = Field(
        default=None, description="Landing folder (default: KUBELEDGER_LANDING, else landing/)."
    )
    as_of: str | None = Field(
        default=None,
        description="The date runs are evaluated as of, YYYY-MM-DD (default: "
        "KUBELEDGER_AS_OF, else today in UTC): re-run limits, repair windows, the close.",
    )

    def db(self) -> Path:
        return _absolute(self.db_path) if self.db_path else warehouse_path()

    def config_file(self) -> Path:
        return _absolute(self.config_path) if self.config_path else config_path()

    def landing(self) -> Path:
        return _absolute(self.landing_dir or os.environ.get(LANDING_ENV) or "landing")

    def as_of_date(self) -> dt.date:
        text = self.as_of or os.environ.get(AS_OF_ENV)
        if not text:
            return dt.datetime.now(dt.UTC).date()
        try:
            return dt.date.fromisoformat(text.strip())
        except ValueError as exc:
            raise ValueError(f"as_of: {text!r} is not a date (YYYY-MM-DD)") from exc

    def config(self) -> Config:
        return load_config(self.config_file())

    def settings(self) -> dict[str, Any]:
        return self.config().settings

    def is_busy(self) -> bool:
        """Whether another process holds the warehouse file now (DuckDB's lock)."""
        from kubeledger.contention import busy_message

        if not self.db().exists():
            return False
        try:
            duckdb.connect(str(self.db())).close()
        except duckdb.IOException as exc:
            return busy_message(str(exc)) is not None
        return False

    def activate(self) -> None:
        """Point the process environment (and so dbt and the CLI helpers) at this warehouse."""
        os.environ["KUBELEDGER_DB"] = str(self.db())
        os.environ["KUBELEDGER_CONFIG"] = str(self.config_file())

    def prepare(self) -> Config:
        """Validate the configuration; write it, every raw table and the ops tables."""
        from kubeledger.warehouse import prepare_warehouse

        self.activate()
        config = prepare_warehouse(self.db(), self.config())
        with self.connect() as con:
            ensure_ops_schema(con)
        return config

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        from kubeledger.warehouse import connect

        with connect(self.db(), read_only=read_only) as con:
            yield con


def dbt_executable() -> str:
    """`kubeledger-dbt` next to this Python (the project's virtualenv): dbt's command line with
    its saved parse kept across vars and warehouse files (kubeledger/dbt_parse.py); else the
    `dbt` there, else the one on PATH."""
    for name in ("kubeledger-dbt", "dbt"):
        beside = Path(sys.executable).parent / name
        if beside.exists():
            return str(beside)
    return "dbt"


def dbt_resource() -> DbtCliResource:
    return DbtCliResource(
        project_dir=dbt_project, profiles_dir=str(PROFILES_DIR), dbt_executable=dbt_executable()
    )
