"""`kubeledger spark load|build` (and `python -m kubeledger.spark`): the project on Spark."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from kubeledger.config import ConfigError
from kubeledger.spark.runner import SparkWarehouse, build_on_spark, export_schema, load_to_spark


@click.group()
def spark() -> None:
    """Run the project on Spark (profile target `spark`; KUBELEDGER_SPARK_DIR says where)."""


@spark.command()
@click.argument("landing_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
def load(landing_dir: Path) -> None:
    """Load a landing folder; register its raw and config tables in Spark."""
    from kubeledger.load import LoadError

    warehouse = SparkWarehouse.from_env()
    started = time.monotonic()
    try:
        summary = load_to_spark(landing_dir, warehouse)
    except (LoadError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"    {summary.total_line()}")
    click.echo(f"    loaded into Spark at {warehouse.root} in {time.monotonic() - started:.1f}s")


@spark.command()
@click.option("--start", default=None, help="First day to (re)allocate, YYYY-MM-DD.")
@click.option("--end", default=None, help="Last day to (re)allocate (default: --start).")
@click.option("--full-refresh", is_flag=True, help="Rebuild every incremental model.")
@click.option("--select", default=None, help="A dbt selector, e.g. marts.")
@click.option("--skip-data-tests", is_flag=True, help="Build models and seeds only.")
@click.option(
    "--vars", "vars_json", default=None, help='More dbt vars as JSON, e.g. {"as_of": "2026-11-20"}.'
)
def build(
    start: str | None,
    end: str | None,
    full_refresh: bool,
    select: str | None,
    skip_data_tests: bool,
    vars_json: str | None,
) -> None:
    """Seed and build the project on Spark (models and data tests)."""
    from kubeledger.dbt_vars import DbtVarError, check_dbt_vars
    from kubeledger.warehouse import DbtError

    dbt_vars = json.loads(vars_json) if vars_json else {}
    if start:
        dbt_vars.update(start_date=start, end_date=end or start)
    try:
        check_dbt_vars(dbt_vars)
    except DbtVarError as exc:
        raise click.BadParameter(str(exc)) from exc
    started = time.monotonic()
    try:
        build_on_spark(
            dbt_vars=dbt_vars or None,
            select=select,
            full_refresh=full_refresh,
            data_tests=not skip_data_tests,
            progress=click.echo,
        )
    except (DbtError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"    built on Spark in {time.monotonic() - started:.1f}s")


@spark.command()
@click.argument("schema")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
def export(schema: str, out_dir: Path) -> None:
    """Write every table and view of a Spark SCHEMA to OUT_DIR/<name>/ as Parquet."""
    from kubeledger.warehouse import DbtError

    try:
        export_schema(schema, out_dir)
    except DbtError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"    exported {schema} to {out_dir}")
