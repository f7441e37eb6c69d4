"""The `kubeledger` command: the everyday jobs, with progress output on long work.

`KUBELEDGER_DB` selects the warehouse and `KUBELEDGER_CONFIG` the configuration for every
command, so several warehouses can live side by side.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

import click

from kubeledger.config import ConfigError
from kubeledger.console import file_progress, generator_progress, verbose_option
from kubeledger.paths import config_path, warehouse_path


def _say(message: str) -> None:
    click.echo(message)


def _step(title: str) -> float:
    click.secho(f"==> {title}", bold=True)
    return time.monotonic()


def _done(started: float, what: str = "done") -> None:
    click.echo(f"    {what} in {time.monotonic() - started:.1f}s")


# `--help` lists the everyday jobs apart from the developers' tools; a command in neither
# list shows under "Other commands".
COMMAND_SECTIONS = (
    (
        "Everyday commands",
        ("load", "build", "close", "bill", "explain", "correct", "verify", "report", "export"),
    ),
    ("Try it", ("demo",)),
    ("Developer commands", ("generate", "bench", "spark")),
)


class _Main(click.Group):
    """The command group; a warehouse held by another process is an error, not a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        listed = [name for _, names in COMMAND_SECTIONS for name in names if name in self.commands]
        return listed + sorted(set(self.commands) - set(listed))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in self.commands)
        placed: set[str] = set()
        sections = [*COMMAND_SECTIONS, ("Other commands", tuple(sorted(self.commands)))]
        for title, names in sections:
            rows = [
                (name, self.commands[name].get_short_help_str(limit))
                for name in names
                if name in self.commands and name not in placed and not self.commands[name].hidden
            ]
            placed.update(name for name, _ in rows)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):  # noqa: ANN201 - click's own signature
        import duckdb

        from kubeledger.contention import busy_message

        try:
            return super().invoke(ctx)
        except duckdb.IOException as exc:
            message = busy_message(str(exc))
            if message is None:
                raise
            raise click.ClickException(message) from exc


@click.group(cls=_Main)
@click.version_option(package_name="kubeledger")
def main() -> None:
    """kubeledger: Kubernetes cost ledger that sums to the cloud invoice to the cent."""


@main.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("demo"),
    show_default=True,
    help="Folder for landing/ and kubeledger.yml.",
)
@click.option("--seed", default=7, show_default=True)
@click.option("--clusters", default=4, show_default=True)
@click.option("--nodes", default=40, show_default=True, help="Nodes in the whole fleet.")
@click.option("--days", default=45, show_default=True)
@click.option("--pods-per-node", default=15, show_default=True)
@click.option("--start", "start_date", default="2026-10-01", show_default=True)
@click.option(
    "--tidy",
    is_flag=True,
    help="No production irregularities (shared LBs, scale to zero, restatements, ...).",
)
@verbose_option
def generate(
    out_dir: Path,
    seed: int,
    clusters: int,
    nodes: int,
    days: int,
    pods_per_node: int,
    start_date: str,
    tidy: bool,
) -> None:
    """Write a realistic demo fleet's landing files in the clouds' and the agent's formats."""
    from kubeledger.generate import Messiness, generate_fleet

    started = _step(f"generating {clusters} clusters, {nodes} nodes, {days} days into {out_dir}")
    with generator_progress("landing files") as progress:
        summary = generate_fleet(
            out_dir,
            seed=seed,
            clusters=clusters,
            nodes=nodes,
            days=days,
            start_date=dt.date.fromisoformat(start_date),
            pods_per_node=pods_per_node,
            progress=progress,
            messiness=Messiness.none() if tidy else Messiness.all(),
        )
    for key, value in summary.items():
        if isinstance(value, int | float | str):
            click.echo(f"    {key}: {value}")
    click.echo(f"    irregularities: {', '.join(summary['messiness']) or 'none'}")
    for delivery in summary["late_deliveries"]:
        click.echo(
            f"    delivered later ({delivery['delivered_on']}): load {delivery['landing']} "
            "after the landing folder"
        )
    _done(started)


@main.command()
@click.argument("landing_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@verbose_option
def load(landing_dir: Path) -> None:
    """Load every file of a landing folder into the raw tables (idempotent)."""
    from kubeledger.load import LoadError, load_landing
    from kubeledger.spark import on_spark
    from kubeledger.warehouse import prepare_warehouse

    if on_spark():  # KUBELEDGER_TARGET=spark or spark_thrift: raw Parquet tables on Spark
        from kubeledger.spark.commands import load as spark_load

        return spark_load.callback(landing_dir)

    started = _step(f"loading {landing_dir} into {warehouse_path()}")
    try:
        prepare_warehouse()
        with file_progress("files", landing_dir) as progress:
            summary = load_landing(warehouse_path(), landing_dir, progress=progress)
            progress.summary = summary.total_line()
    except (LoadError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from exc
    _done(started)


def _as_of_today() -> dt.date:
    """The date runs are evaluated as of: `KUBELEDGER_AS_OF`, else today (UTC)."""
    text = os.environ.get("KUBELEDGER_AS_OF")
    return dt.date.fromisoformat(text.strip()) if text else dt.datetime.now(dt.UTC).date()


def dbt_build_args(select: str | None = None, full_refresh: bool = False) -> list[str]:
    """The dbt command of a build. Unit tests are the test suite's (`make test`); a build runs
    the seeds, models and data tests in one dbt command (the seeds first: models read them),
    the seeds also when `select` picks some models."""
    args = ["build", "--exclude", "resource_type:unit_test"]
    if full_refresh:
        args.append("--full-refresh")
    if select:
        args += ["--select", f"resource_type:seed {select}"]
    return args


def run_build(
    *,
    start: str | None = None,
    end: str | None = None,
    full_refresh: bool = False,
    select: str | None = None,
    reattribute_month: str | None = None,
    progress=_say,
):
    """Write the configuration into the warehouse, run the quality gate, then seed and build
    the dbt project; return what was built (publish.BuildOutcome).

    A range build first allocates again every day whose billing lines changed since it was
    allocated (SPEC §9, reallocation.py), in the same dbt run; every build then stores the
    fingerprints of the days it allocated.
    """
    from kubeledger import reallocation
    from kubeledger.publish import BuildOutcome
    from kubeledger.quality_gate import run_quality_gate_alongside
    from kubeledger.warehouse import connect, parse_dbt_project, prepare_warehouse, run_dbt

    config = prepare_warehouse()
    db = warehouse_path()
    # the raw-data expectations block the build before any model, as in Dagster; dbt parses
    # the project meanwhile (the parse does not open the warehouse)
    validations, manifest = run_quality_gate_alongside(
        db,
        dt.date.fromisoformat(start) if start else None,
        dt.date.fromisoformat(end or start) if start else None,
        lambda: parse_dbt_project(db),
        progress=progress,
    )
    dbt_vars: dict[str, object] = {}
    if start:
        dbt_vars = {"start_date": start, "end_date": end or start}
    if reattribute_month:
        dbt_vars["reattribute_month"] = reattribute_month
    changed = reallocation.Reallocation()
    if start and not full_refresh:
        changed = reallocation.check_changed_days(
            db,
            lambda args: run_dbt(args, db_path=db),
            as_of=_as_of_today(),
            max_days_back=int(config.settings["rerun_max_days_back"]),
        )
        if progress is not None and (changed.days or changed.too_old):
            progress(f"    {changed.describe()}")
        if changed.days:
            dbt_vars["reallocate_days"] = changed.dbt_vars()
    built = run_dbt(dbt_build_args(select, full_refresh), dbt_vars=dbt_vars, manifest=manifest)
    outcome = BuildOutcome.of(db, [built], validations, start, end, changed.days)
    if select is None:
        with connect(db) as con:
            reallocation.record_allocation(
                con,
                first_day=dt.date.fromisoformat(start) if start and not full_refresh else None,
                last_day=dt.date.fromisoformat(end or start)
                if start and not full_refresh
                else None,
                extra_days=changed.days,
            )
    return outcome


def _date_option(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --start/--end value: a real date YYYY-MM-DD (it becomes a dbt var pasted into SQL)."""
    from kubeledger.dbt_vars import DbtVarError, parse_date

    if value is None:
        return None
    try:
        return parse_date(f"--{param.name}", value).isoformat()
    except DbtVarError as exc:
        raise click.BadParameter(str(exc)) from exc


@main.command()
@click.option(
    "--start", default=None, callback=_date_option, help="First day to (re)allocate, YYYY-MM-DD."
)
@click.option(
    "--end",
    default=None,
    callback=_date_option,
    help="Last day to (re)allocate (default: --start).",
)
@click.option("--full-refresh", is_flag=True, help="Rebuild every incremental model.")
@click.option("--select", default=None, help="A dbt selector, e.g. marts.")
@click.option(
    "--reattribute-month",
    default=None,
    help="Re-attribute this month's leftover cloud charges (YYYY-MM) under the "
    "current configuration.",
)
@verbose_option
def build(
    start: str | None,
    end: str | None,
    full_refresh: bool,
    select: str | None,
    reattribute_month: str | None,
) -> None:
    """Build the warehouse with dbt (models and their tests), after the quality gate."""
    from kubeledger.publish import after_run
    from kubeledger.quality_gate import QualityGateStopped
    from kubeledger.spark import on_spark
    from kubeledger.warehouse import DbtError

    if on_spark():  # KUBELEDGER_TARGET=spark or spark_thrift: dbt build on Spark
        from kubeledger.spark.commands import build as spark_build

        as_of = os.environ.get("KUBELEDGER_AS_OF")
        return spark_build.callback(
            start, end, full_refresh, select, False, json.dumps({"as_of": as_of}) if as_of else None
        )

    started = _step(f"building {warehouse_path()} with {config_path().name}")
    try:
        outcome = run_build(
            start=start,
            end=end,
            full_refresh=full_refresh,
            select=select,
            reattribute_month=reattribute_month,
        )
    except (DbtError, ConfigError, QualityGateStopped) as exc:
        raise click.ClickException(str(exc)) from exc
    after_run(warehouse_path(), outcome=outcome, command="kubeledger build", echo=click.echo)
    _done(started)


@main.command()
@click.option(
    "--out", "out_dir", type=click.Path(path_type=Path), default=Path("demo"), show_default=True
)
@click.option("--as-of", "as_of", default=None, help="Close as of this date (default: today).")
@click.option("--month", default="2026-10", show_default=True, help="The month to close.")
@verbose_option
def demo(out_dir: Path, as_of: str | None, month: str) -> None:
    """Generate the demo fleet, load it, build the ledger, close the month, print the bill."""
    from kubeledger import report_console
    from kubeledger.generate import generate_fleet
    from kubeledger.load import load_landing
    from kubeledger.publish import after_run, print_where_to_look
    from kubeledger.quality_gate import QualityGateStopped
    from kubeledger.warehouse import DbtError, prepare_warehouse

    os.environ.setdefault("KUBELEDGER_DB", str(out_dir / "kubeledger.duckdb"))
    os.environ["KUBELEDGER_CONFIG"] = str(out_dir / "kubeledger.yml")
    db = warehouse_path()
    if db.exists():
        db.unlink()
    # one line per step where its bar says it all (the bar ends with the time it took)
    _step(f"generating the demo fleet into {out_dir}")
    with generator_progress("landing files") as progress:
        fleet = generate_fleet(out_dir, progress=progress)
    _step(f"loading {out_dir / 'landing'} into {db}")
    prepare_warehouse()
    with file_progress("files", out_dir / "landing") as progress:
        progress.summary = load_landing(db, out_dir / "landing", progress=progress).total_line()
    started = _step("building the ledger (quality gate, dbt build)")
    try:
        outcome = run_build(progress=_say)
    except (DbtError, QualityGateStopped) as exc:
        raise click.ClickException(str(exc)) from exc
    _done(started)
    # Files the clouds delivered later (the restated CUR of the closed month): loaded and
    # built before the close, as a daily run would.
    for delivery in fleet["late_deliveries"]:
        started = _step(f"loading the delivery of {delivery['delivered_on']}")
        with file_progress("files", Path(delivery["landing"])) as progress:
            summary = load_landing(db, Path(delivery["landing"]), progress=progress)
            progress.summary = summary.total_line()
        try:
            outcome = run_build(progress=_say)
        except (DbtError, QualityGateStopped) as exc:
            raise click.ClickException(str(exc)) from exc
        _done(started)
    report_console.print_demo_summary(db, month=month, as_of=as_of, echo=click.echo)
    # the serving copy (what the report and BI tools read) and the Dagster instance, once
    published = after_run(db, outcome=outcome, month=month, command="kubeledger demo", echo=_say)
    from kubeledger.report import commands as report_commands

    report_path = out_dir / f"report-{month}.html"
    click.get_current_context().invoke(
        report_commands.report, month=month, out_path=report_path, top=25
    )
    print_where_to_look(published, report_path, click.echo)


COMMAND_MODULES = (
    ("kubeledger.close.commands", ("close", "bill", "explain", "correct", "verify")),
    ("kubeledger.report.commands", ("report",)),
    ("kubeledger.export.commands", ("export",)),
    ("kubeledger.bench.commands", ("bench",)),
    ("kubeledger.spark.commands", ("spark",)),
)


class CommandImportError(RuntimeError):
    """A command's module cannot be imported: the command would be missing from `--help`."""


def register_commands(group: click.Group = main) -> None:
    """Add the commands that live with their feature's package; one that cannot be imported
    is an error naming it, never a command silently missing."""
    import importlib

    for module_name, names in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise CommandImportError(
                f"kubeledger: the {', '.join(names)} command(s) cannot be loaded: "
                f"importing {module_name} failed ({exc})"
            ) from exc
        for name in names:
            command = getattr(module, name, None)
            if not isinstance(command, click.Command):
                raise CommandImportError(f"kubeledger: {module_name} defines no command {name!r}")
            group.add_command(command, name)


register_commands()

if __name__ == "__main__":
    sys.exit(main())
