"""The close commands: `close`, `bill`, `explain`, `correct`, `verify` (on `kubeledger`).

Every command reads the warehouse named by `KUBELEDGER_DB`; `close` and `correct` first write
the configuration named by `KUBELEDGER_CONFIG` into it (when that file exists) and build the
close models with dbt (the project at `DBT_PROJECT_DIR`, default this checkout). A refusal
exits non-zero with the reason and, where there are any, the close-status rows behind it.
`bill` and `explain` refuse (non-zero) a sealed month that fails `verify`.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import click
import duckdb

from kubeledger.close import bill as bills
from kubeledger.close.closer import (
    CloseError,
    close_month,
    correct_month,
    month_bounds,
    parse_month,
)
from kubeledger.close.seal import SealError
from kubeledger.paths import config_path, warehouse_path


def _month(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    try:
        return parse_month(value)
    except CloseError as exc:
        raise click.BadParameter(str(exc)) from exc


def _as_of(_ctx: click.Context, _param: click.Parameter, value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(f"--as-of must be a date YYYY-MM-DD, got {value!r}") from exc


month_option = click.option(
    "--month", required=True, callback=_month, help="The month, YYYY-MM (UTC days)."
)
as_of_option = click.option(
    "--as-of",
    "as_of",
    default=None,
    callback=_as_of,
    help="Evaluate the close as of this date, YYYY-MM-DD (default: today, UTC).",
)


def _prepare_config() -> None:
    """Write kubeledger.yml into the warehouse, as `kubeledger build` does, when it exists."""
    if not config_path().exists():
        return
    from kubeledger.config import ConfigError
    from kubeledger.warehouse import prepare_warehouse

    try:
        prepare_warehouse()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


def _open_warehouse() -> duckdb.DuckDBPyConnection:
    """The warehouse for reading: read-only, unless this process has it open already (an
    in-process dbt run keeps its connection, and DuckDB refuses a second configuration)."""
    db = warehouse_path()
    if not db.exists():
        raise click.ClickException(f"no warehouse at {db} (set KUBELEDGER_DB)")
    try:
        return duckdb.connect(str(db), read_only=True)
    except duckdb.ConnectionException:
        return duckdb.connect(str(db))


def _echo_rows(rows: list[dict], *, err: bool = False) -> None:
    if rows:
        for text in bills.status_table(rows):
            click.echo(f"    {text}", err=err)


@click.command("close")
@month_option
@as_of_option
def close(month: str, as_of: dt.date | None) -> None:
    """Close a month: check grace window, completeness and bounds, then seal its bill."""
    from kubeledger.spark import on_spark

    db = warehouse_path()
    as_of = as_of or dt.datetime.now(dt.UTC).date()
    try:
        if on_spark():  # the close models built, sealed and published on Spark
            from kubeledger.spark.close import close_month_on_spark

            click.secho(f"==> closing {month} as of {as_of} on Spark", bold=True)
            result = close_month_on_spark(month, as_of)
        else:
            click.secho(f"==> closing {month} as of {as_of} in {db}", bold=True)
            _prepare_config()
            result = close_month(db, month, as_of, progress=None)
    except CloseError as exc:
        click.secho(f"refused: {exc}", fg="red", err=True)
        _echo_rows(exc.rows, err=True)
        sys.exit(2)
    except SealError as exc:
        click.secho(f"refused: {exc}", fg="red", err=True)
        sys.exit(2)
    _echo_rows(result.slices)
    sealed = result.bill
    click.echo(
        f"sealed {month} as bill {sealed.bill_id}: status {sealed.bill_status}, "
        f"{sealed.line_count} lines over {sealed.slice_count} slices, "
        f"{bills.money(sealed.billed_cost, sealed.currency)} billed = target "
        f"{bills.money(sealed.target_cost, sealed.currency)}"
        + (
            f"; estimated: {', '.join(sealed.estimated_clusters)}"
            if sealed.estimated_clusters
            else ""
        )
    )
    if on_spark():
        # BI tools read Spark's tables through its SQL endpoint: there is no DuckDB warehouse
        # to publish a serving copy of (KUBELEDGER_DB names some other file, or none)
        click.echo("    readers see the sealed bill in Spark's sealed schema (no serving copy)")
        return
    from kubeledger.publish import after_run

    after_run(db, month=month, command="kubeledger close", echo=click.echo)


@click.command("bill")
@month_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "parquet"]),
    default="table",
    show_default=True,
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (required for parquet; default: standard output).",
)
def bill(month: str, output_format: str, out: Path | None) -> None:
    """Print or export a month's bill: the sealed one, else the draft (marked DRAFT)."""
    if output_format == "parquet" and out is None:
        raise click.UsageError("--format parquet needs --out FILE")
    with _open_warehouse() as con:
        try:
            the_bill = bills.load_bill(con, month)
        except bills.BillError as exc:
            raise click.ClickException(str(exc)) from exc
        if output_format == "table":
            text = "\n".join(bills.table_lines(the_bill)) + "\n"
            if out is None:
                click.echo(text, nl=False)
            else:
                out.write_text(text)
        elif output_format == "csv":
            text = bills.csv_text(the_bill)
            if out is None:
                click.echo(text, nl=False)
            else:
                out.write_text(text)
        else:
            bills.write_parquet(con, the_bill, out)
    if output_format != "table" or out is not None:
        # Keep a CSV on standard output clean: the summary goes to standard error then.
        to_err = out is None
        for text in bills.header_lines(the_bill):
            click.echo(text, err=to_err)
        if out is not None:
            click.echo(f"wrote {len(the_bill.lines)} lines to {out}", err=to_err)
        click.echo(bills.check_line(the_bill), err=to_err)
    if the_bill.unbalanced_slices() or the_bill.billed_total != the_bill.target_total:
        click.secho(f"the bill of {month} does not balance (MISMATCH above)", fg="red", err=True)
        sys.exit(1)


@click.command("explain")
@month_option
@click.argument("line_argument", metavar="[LINE_ID]", required=False)
@click.option(
    "--line",
    "line_id",
    default=None,
    help="The line ID, <cluster>|<family>|<cost center or team> (or give it as LINE_ID).",
)
@click.option("--team", default=None, help="Explain what this team pays, and why.")
@click.option("--cost-center", "cost_center", default=None, help="The same for a cost center.")
@click.option("--application", default=None, help="The same for an application.")
def explain(
    month: str,
    line_argument: str | None,
    line_id: str | None,
    team: str | None,
    cost_center: str | None,
    application: str | None,
) -> None:
    """Explain a bill line (its owners' split, estimate per day, factor, invoice slice, carried
    cent, pods), or what a team, cost center or application pays per cluster and family."""
    from kubeledger.close import owner_explain

    owners = {
        name: value
        for name, value in (
            ("team", team),
            ("cost_center", cost_center),
            ("application", application),
        )
        if value is not None
    }
    lines = [value for value in (line_argument, line_id) if value is not None]
    if len(owners) + len(lines) != 1:
        raise click.UsageError(
            "give exactly one of LINE_ID (or --line), --team, --cost-center, --application"
        )
    with _open_warehouse() as con:
        try:
            if owners:
                ((dimension, value),) = owners.items()
                text = owner_explain.explain_owner(con, month, dimension, value)
            else:
                text = bills.explain_line(con, month, lines[0])
                text[2:2] = owner_explain.line_split(con, month, lines[0])
            for row in text:
                click.echo(row)
        except bills.BillError as exc:
            raise click.ClickException(str(exc)) from exc


@click.command("correct")
@month_option
@as_of_option
def correct(month: str, as_of: dt.date | None) -> None:
    """Recompute a sealed month now and seal any per-line change as a correction bill."""
    db = warehouse_path()
    as_of = as_of or dt.datetime.now(dt.UTC).date()
    first, _last = month_bounds(month)
    click.secho(f"==> recomputing sealed {month} ({first:%B %Y}) as of {as_of}", bold=True)
    from kubeledger.spark import on_spark

    try:
        if on_spark():
            from kubeledger.spark.close import correct_month_on_spark

            result = correct_month_on_spark(month, as_of)
        else:
            _prepare_config()
            result = correct_month(db, month, as_of)
    except CloseError as exc:
        click.secho(f"refused: {exc}", fg="red", err=True)
        _echo_rows(exc.rows, err=True)
        sys.exit(2)
    except SealError as exc:
        click.secho(f"refused: {exc}", fg="red", err=True)
        sys.exit(2)
    correction = result.correction
    if correction is None:
        click.echo(f"no change: {month} recomputed now bills every line as sealed")
        return
    click.echo(
        f"sealed correction {correction.correction_number} of {month} as "
        f"{correction.correction_id}: {correction.changed_line_count} lines changed, "
        f"delta {bills.money(correction.delta_cost, bills.currency_of_rows(result.slices))} "
        "(the sealed bill is unchanged)"
    )


@click.command("verify")
@click.option(
    "--month",
    default=None,
    callback=lambda ctx, param, value: None if value is None else _month(ctx, param, value),
    help="Only this month's seals, YYYY-MM (the chain and the tables are always checked).",
)
def verify(month: str | None) -> None:
    """Recompute every seal's hash from the warehouse and its copy; non-zero on any difference."""
    from kubeledger.close.verify import verify_seals
    from kubeledger.spark import on_spark

    if on_spark():  # the Spark store's rows, read through the Thrift Server, and its copies
        from kubeledger.spark.close import verify_on_spark

        report = verify_on_spark(month)
    else:
        with _open_warehouse() as con:
            report = verify_seals(con, month)
    for note in report.notes:
        click.echo(f"    note: {note}")
    if not report.ok:
        for problem in report.problems:
            click.secho(f"DIFFERS {problem}", fg="red", err=True)
        if on_spark():
            from kubeledger.spark import SparkWarehouse

            copies = SparkWarehouse.from_env().copies_dir
        else:
            copies = f"{warehouse_path()}.seals"
        click.secho(
            f"verify failed: {len(report.problems)} difference(s); the sealed copies under "
            f"{copies} are the evidence of what was sealed",
            fg="red",
            err=True,
        )
        sys.exit(1)
    scope = f"month {month}" if month else "every month"
    click.echo(
        f"verified {scope}: {len(report.artifacts)} sealed artifact(s) "
        f"({', '.join(report.months) or 'none sealed'}) match their hashes, chain and copies"
    )
