"""Load, build, close and report one generated fleet with whichever kubeledger is importable.

Run as a script by tests/test_refactor_outputs.py, once with PYTHONPATH at the code before the
issue 15 refactor (a temporary git worktree) and once at the current code, so it imports only
what both versions have under the same names: `prepare_warehouse`, `load_landing`, `run_dbt`,
`close_month`, `load_report_data`, `write_report`.

    python tests/refactor_outputs_driver.py WORKDIR LANDING CONFIG MONTH AS_OF [LATE ...]

Writes WORKDIR/kubeledger.duckdb (built from LANDING then each LATE folder, October closed and
sealed as of AS_OF) and WORKDIR/report.html (generated_at fixed), and prints which package
it ran.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

GENERATED_AT = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)


def main(argv: list[str]) -> None:
    workdir, landing, config = (Path(arg) for arg in argv[:3])
    month, as_of, late = argv[3], dt.date.fromisoformat(argv[4]), [Path(a) for a in argv[5:]]
    db = workdir / "kubeledger.duckdb"
    os.environ["KUBELEDGER_DB"] = str(db)
    os.environ["KUBELEDGER_CONFIG"] = str(config)
    os.environ["KUBELEDGER_AS_OF"] = as_of.isoformat()
    os.environ["DBT_TARGET_PATH"] = str(workdir / "target")
    os.environ["DBT_LOG_PATH"] = str(workdir / "logs")

    import duckdb

    import kubeledger
    from kubeledger.close.closer import close_month
    from kubeledger.config import load_config
    from kubeledger.load import load_landing
    from kubeledger.report.data import load_report_data
    from kubeledger.report.render import write_report
    from kubeledger.warehouse import prepare_warehouse, run_dbt

    print(f"kubeledger from {Path(kubeledger.__file__).parent}", flush=True)
    dbt_vars = {"as_of": as_of.isoformat()}
    prepare_warehouse(db, load_config(config))
    for folder in [landing, *late]:
        load_landing(db, folder)
        run_dbt(["seed", "--quiet"], db_path=db, dbt_vars=dbt_vars)
        run_dbt(["build", "--exclude", "resource_type:unit_test"], db_path=db, dbt_vars=dbt_vars)
    close_month(db, month, as_of)
    with duckdb.connect(str(db), read_only=True) as con:
        data = load_report_data(con, month)
    write_report(data, workdir / "report.html", generated_at=GENERATED_AT)


if __name__ == "__main__":
    main(sys.argv[1:])
