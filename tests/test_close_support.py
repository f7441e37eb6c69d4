"""Shared helpers for the monthly-close tests (no tests of its own).

The close models read five models other parts of the project build. These tests run the
close on its own: a scratch copy of the dbt project holds the close models, the portable
macros and a stub model per input (`select * from mock.<name>`); each test warehouse has the
mock tables, with exactly the inputs' names and columns, and views `main.<name>` over them
(what building the stubs would create), so only the close models need building.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from kubeledger.close.closer import DbtProject, _env, release_dbt_connection

REPO = Path(__file__).resolve().parents[1]

MOCK_TABLES = {
    "int_billing_lines_scoped": (
        "billing_line_id varchar, cluster_id varchar, charge_date date, cost_family varchar, "
        "resource_type varchar, resource_key varchar, scope_status varchar, "
        "effective_cost decimal(38, 10), provider varchar, billing_account_id varchar"
    ),
    "stg_config__clusters": (
        "cluster_id varchar, provider varchar, has_billing_link boolean, currency varchar, "
        "default_team varchar, default_cost_center varchar, default_application varchar"
    ),
    "stg_config__settings": (
        "cpu_cost_weight double, memory_cost_weight double, estimate_lookback_days integer, "
        "include_data_transfer boolean, platform_team varchar, platform_cost_center varchar, "
        "grace_days integer, deadline_days integer, factor_min double, factor_max double, "
        "unassigned_policy varchar, bill_line_grain varchar, repair_window_days integer, "
        "rerun_max_days_back integer, billing_retention_days integer, currency varchar"
    ),
    "fct_owner_costs_daily": (
        "cluster_id varchar, usage_date date, cost_family varchar, team varchar, "
        "cost_center varchar, application varchar, owner_status varchar, total_cost double"
    ),
    "fct_reconciliation_daily": (
        "cluster_id varchar, usage_date date, is_complete boolean, is_awaiting_usage boolean"
    ),
    "fct_pod_costs_daily": (
        "cluster_id varchar, usage_date date, namespace varchar, pod varchar, node varchar, "
        "team varchar, cost_center varchar, total_cost double"
    ),
}

DEFAULT_SETTINGS = {
    "cpu_cost_weight": 0.5,
    "memory_cost_weight": 0.5,
    "estimate_lookback_days": 7,
    "include_data_transfer": False,
    "platform_team": "platform",
    "platform_cost_center": "platform",
    "grace_days": 4,
    "deadline_days": 10,
    "factor_min": 0.2,
    "factor_max": 5.0,
    "unassigned_policy": "separate",
    "bill_line_grain": "cost_center",
    "repair_window_days": 7,
    "rerun_max_days_back": 92,
    "billing_retention_days": 90,
    "currency": "USD",
}


def make_scratch_project(dest: Path) -> DbtProject:
    """A copy of the project with the close models and a stub for each of their inputs."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "dbt_project.yml", dest / "dbt_project.yml")
    (dest / "macros").mkdir(exist_ok=True)
    shutil.copy(REPO / "macros" / "generate_schema_name.sql", dest / "macros")
    for folder in (
        "macros/portable",
        "macros/incremental",
        "macros/close",
        "macros/tests",
        "models/intermediate/close",
        "models/marts/close",
        "data-tests/close",
    ):
        shutil.copytree(REPO / folder, dest / folder, dirs_exist_ok=True)
    # The doc blocks the close marts' column descriptions use (the vocabulary, written once).
    shutil.copy(REPO / "models" / "docs.md", dest / "models" / "docs.md")
    # The currency minor units the close rounds to (SPEC §1.2): the project's own seed.
    (dest / "seeds").mkdir(exist_ok=True)
    shutil.copy(REPO / "seeds" / "currency_minor_units.csv", dest / "seeds")
    (dest / "seeds" / "_seeds.yml").write_text(
        "version: 2\nseeds:\n  - name: currency_minor_units\n    config:\n"
        "      tags: [close]\n"
        "      column_types: {currency: string, minor_unit_digits: integer}\n"
    )
    stubs = dest / "models" / "stubs"
    stubs.mkdir(parents=True, exist_ok=True)
    for name in MOCK_TABLES:
        (stubs / f"{name}.sql").write_text(f"select * from mock.{name}\n")
    return DbtProject(
        project_dir=dest,
        profiles_dir=REPO / "profiles",
        target_path=dest / "target",
        log_path=dest / "logs",
    )


def new_warehouse(path: Path, **settings: object) -> Path:
    """A warehouse with empty mock inputs, their `main` views and one settings row."""
    values = {**DEFAULT_SETTINGS, **settings}
    with duckdb.connect(str(path)) as con:
        con.execute("create schema if not exists mock")
        for name, columns in MOCK_TABLES.items():
            con.execute(f"create or replace table mock.{name} ({columns})")
            con.execute(f"create or replace view main.{name} as select * from mock.{name}")
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        con.execute(
            f"insert into mock.stg_config__settings ({names}) values ({marks})",
            list(values.values()),
        )
    return path


def month_days(month: str) -> list[dt.date]:
    year, number = (int(part) for part in month.split("-"))
    day = dt.date(year, number, 1)
    days = []
    while day.month == number:
        days.append(day)
        day += dt.timedelta(days=1)
    return days


def add_cluster(
    con: duckdb.DuckDBPyConnection,
    cluster: str,
    *,
    linked: bool = True,
    provider: str = "aws",
    currency: str = "USD",
) -> None:
    con.execute(
        "insert into mock.stg_config__clusters values (?, ?, ?, ?, null, null, null)",
        [cluster, provider, linked, currency],
    )


def add_month(
    con: duckdb.DuckDBPyConnection,
    cluster: str,
    month: str,
    *,
    daily_costs: dict[str, float],
    daily_invoice: float | None,
    family: str = "compute",
    incomplete_days: tuple[dt.date, ...] = (),
) -> None:
    """Every day of the month: each cost center's ledger cost, one billing line (if any) and
    a reconciliation row (complete unless listed)."""
    for day in month_days(month):
        for cost_center, cost in daily_costs.items():
            owned = cost_center != "__unassigned__"
            con.execute(
                "insert into mock.fct_owner_costs_daily values (?, ?, ?, ?, ?, 'app', ?, ?)",
                [
                    cluster,
                    day,
                    family,
                    f"team-{cost_center}" if owned else None,
                    cost_center if owned else None,
                    "owned" if owned else "unowned",
                    cost,
                ],
            )
            con.execute(
                "insert into mock.fct_pod_costs_daily values (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    cluster,
                    day,
                    f"ns-{cost_center}",
                    f"pod-{cost_center}-1",
                    "node-1",
                    f"team-{cost_center}" if owned else None,
                    cost_center if owned else None,
                    cost,
                ],
            )
        if daily_invoice is not None:
            con.execute(
                "insert into mock.int_billing_lines_scoped "
                "values (?, ?, ?, ?, 'instance', 'i-1', 'matched', ?, 'aws', 'acct-1')",
                [f"{cluster}-{family}-{day:%Y%m%d}", cluster, day, family, daily_invoice],
            )
        con.execute(
            "insert into mock.fct_reconciliation_daily values (?, ?, ?, false)",
            [cluster, day, day not in incomplete_days],
        )


def run_dbt(project: DbtProject, db: Path, args: list[str], dbt_vars: dict | None = None):
    """One in-process dbt invocation on the scratch project; fails the test on error."""
    from dbt.cli.main import dbtRunner

    command = [
        *args,
        "--project-dir",
        str(project.project_dir),
        "--profiles-dir",
        str(project.profiles_dir),
        "--target-path",
        str(project.target_path),
        "--log-path",
        str(project.log_path),
        "--quiet",
    ]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    with _env(KUBELEDGER_DB=str(db)):
        try:
            result = dbtRunner().invoke(command)
        finally:
            release_dbt_connection()
    assert result.exception is None, result.exception
    assert result.success, [
        (r.node.name, r.message)
        for r in (getattr(result.result, "results", None) or [])
        if str(r.status) in ("error", "fail", "runtime error")
    ]
    return result


def compile_inline(project: DbtProject, db: Path, sql: str) -> str:
    """The SQL dbt compiles a Jinja snippet to, with the project's macros."""
    result = run_dbt(project, db, ["compile", "--inline", sql])
    return result.result.results[0].node.compiled_code


def sealed_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    from kubeledger.close.seal import SCHEMA, SEALED_TABLES

    return {
        table: con.execute(f"select count(*) from {SCHEMA}.{table}").fetchone()[0]
        for table in SEALED_TABLES
    }


@pytest.fixture(scope="session")
def close_project(tmp_path_factory: pytest.TempPathFactory) -> DbtProject:
    """One scratch dbt project for the whole session."""
    return make_scratch_project(tmp_path_factory.mktemp("close_project"))
