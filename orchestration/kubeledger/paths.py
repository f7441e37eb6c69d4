"""Where things live: the dbt project, dbt's target folder, the warehouse file and the
configuration file."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
PROFILES_DIR = PROJECT_DIR / "profiles"


def warehouse_path() -> Path:
    """The DuckDB warehouse: `KUBELEDGER_DB`, default `warehouse/kubeledger.duckdb`."""
    path = Path(os.environ.get("KUBELEDGER_DB", "warehouse/kubeledger.duckdb"))
    return path if path.is_absolute() else Path.cwd() / path


def config_path() -> Path:
    """The configuration file: `KUBELEDGER_CONFIG`, default `kubeledger.yml`."""
    path = Path(os.environ.get("KUBELEDGER_CONFIG", "kubeledger.yml"))
    return path if path.is_absolute() else Path.cwd() / path


def dbt_target_path(flag: str | None = None) -> Path:
    """Where dbt writes its artifacts: `flag` (a --target-path), else `DBT_TARGET_PATH`, else
    `target`; a relative folder is the project's, as dbt resolves it."""
    path = Path(flag or os.environ.get("DBT_TARGET_PATH", "").strip() or "target")
    return path if path.is_absolute() else PROJECT_DIR / path
