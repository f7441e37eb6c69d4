"""`kubeledger export`: one month of the marts as Parquet or CSV, plus a FOCUS file."""

from __future__ import annotations

from pathlib import Path

import click
import duckdb

from kubeledger.export.focus import DEFAULT_BILLING_ACCOUNT_ID
from kubeledger.export.schema import MARTS_BY_NAME
from kubeledger.export.writer import FORMATS, ExportError, export_month, month_bounds
from kubeledger.paths import warehouse_path


@click.command("export")
@click.option("--month", required=True, help="The month, YYYY-MM (UTC days).")
@click.option(
    "--format", "file_format", type=click.Choice(FORMATS), default="parquet", show_default=True
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The folder to write (created when missing).",
)
@click.option(
    "--mart",
    "marts",
    multiple=True,
    type=click.Choice(sorted(MARTS_BY_NAME)),
    help="Export only this mart (repeatable); default every mart.",
)
@click.option(
    "--billing-account-id",
    default=DEFAULT_BILLING_ACCOUNT_ID,
    show_default=True,
    help="BillingAccountId of the FOCUS file's rows.",
)
def export(
    month: str, file_format: str, out_dir: Path, marts: tuple[str, ...], billing_account_id: str
) -> None:
    """Export a month of every mart (stable schema, manifest.json) and a FOCUS file."""
    try:
        month_bounds(month)
    except ExportError as exc:
        raise click.BadParameter(str(exc), param_hint="--month") from exc
    db = warehouse_path()
    if not db.exists():
        raise click.ClickException(f"no warehouse at {db} (set KUBELEDGER_DB)")
    click.secho(f"==> exporting {month} from {db} to {out_dir} as {file_format}", bold=True)
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.ConnectionException:
        con = duckdb.connect(str(db))
    try:
        result = export_month(
            con,
            month,
            out_dir,
            file_format,
            marts=list(marts) or None,
            billing_account_id=billing_account_id,
            progress=click.echo,
        )
    except ExportError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        con.close()
    click.echo(f"    wrote {result.manifest_path}")
