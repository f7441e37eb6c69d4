"""Build a warehouse from a landing folder and a configuration, the way `kubeledger` does.

End-to-end tests write real-format landing files, then call `build_warehouse` and query the
marts. Each build uses its own DuckDB file, so tests never share a writer. Later deliveries
(the generator's `late/<day>/` folders: a restated CUR) are loaded and built in order after
the first build, as `kubeledger demo` does; `close_month` then closes a month the way the
demo's last step does.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import yaml

from kubeledger.cli import dbt_build_args, run_build
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
    late: Sequence[Path | str | dict] = (),
) -> Path:
    """Load `landing` into `workdir/kubeledger.duckdb` and build it; then load and build each
    folder of `late` in order (paths, or the generator summary's `late_deliveries` entries).
    Returns the DB path."""
    db = workdir / "kubeledger.duckdb"
    config_path = config if isinstance(config, Path) else workdir / "kubeledger.yml"
    if not isinstance(config, Path):
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    os.environ["KUBELEDGER_DB"] = str(db)
    os.environ["KUBELEDGER_CONFIG"] = str(config_path)
    prepare_warehouse(db, load_config(config_path))
    for folder in [landing, *(_folder(delivery) for delivery in late)]:
        load_landing(db, folder)
        _build(db, dbt_vars, select)
    return db


def late_folders(summary: dict) -> list[Path]:
    """The later deliveries of a generator summary, in the order they are loaded."""
    return [_folder(delivery) for delivery in summary.get("late_deliveries", [])]


def close_month(db: Path, month: str, as_of: dt.date):
    """Close and seal `month` as of `as_of`, as `kubeledger close` / `make demo` do."""
    from kubeledger.close.closer import close_month as close

    return close(db, month, as_of)


def _folder(delivery: Path | str | dict) -> Path:
    return Path(delivery["landing"] if isinstance(delivery, dict) else delivery)


def _build(db: Path, dbt_vars: dict[str, Any] | None, select: str | None) -> None:
    if dbt_vars:
        # vars the CLI has no option for (the Spark parity test's as_of): build as run_build
        # does, with them
        run_dbt(dbt_build_args(select), db_path=db, dbt_vars=dbt_vars)
    else:
        run_build(select=select, progress=None)


def query(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()
