"""Build a warehouse from a landing folder and a configuration, the way `kubeledger` does.

End-to-end tests write real-format landing files, then call `build_warehouse` and query the
marts. Each build uses its own DuckDB file, so tests never share a writer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import duckdb
import yaml

from kubeledger.config import load_config
from kubeledger.load import load_landing
from kubeledger.warehouse import prepare_warehouse, run_dbt


def build_warehouse(
    workdir: Path,
    landing: Path,
    config: dict[str, Any] | Path,
    *,
    dbt_vars: dict[str, Any] | None = None,
    select: str | None = None,
) -> Path:
    """Load `landing` into `workdir/kubeledger.duckdb` and build it; returns the DB path."""
    db = workdir / "kubeledger.duckdb"
    config_path = config if isinstance(config, Path) else workdir / "kubeledger.yml"
    if not isinstance(config, Path):
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    os.environ["KUBELEDGER_DB"] = str(db)
    os.environ["KUBELEDGER_CONFIG"] = str(config_path)
    prepare_warehouse(db, load_config(config_path))
    load_landing(db, landing)
    run_dbt(["seed", "--quiet"], db_path=db)
    args = ["build", "--exclude", "resource_type:unit_test"]
    if select:
        args += ["--select", select]
    run_dbt(args, db_path=db, dbt_vars=dbt_vars)
    return db


def query(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()
