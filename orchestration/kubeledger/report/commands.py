"""`kubeledger report`: the month's chargeback report as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import click
import duckdb

from kubeledger.bill_backing import console_lines
from kubeledger.paths import warehouse_path
from kubeledger.report.data import ReportError, load_report_data, parse_month
from kubeledger.report.render import money, pct, write_report


def open_warehouse_read_only() -> duckdb.DuckDBPyConnection:
    """The serving copy (serving.py) when there is one: reading it never blocks a build.
    Else the warehouse for reading; read-write only when this process already holds it open
    (an in-process dbt run keeps its connection and DuckDB refuses a second configuration)."""
    from kubeledger.serving import serving_path

    serving = serving_path()
    if serving.exists():
        return duckdb.connect(str(serving), read_only=True)
    db = warehouse_path()
    if not db.exists():
        raise click.ClickException(
            f"no warehouse at {db} (set KUBELEDGER_DB, or run "
            "`kubeledger load` and `kubeledger build` first)"
        )
    try:
        return duckdb.connect(str(db), read_only=True)
    except duckdb.ConnectionException:
        return duckdb.connect(str(db))


@click.command("report")
@click.option("--month", required=True, help="The month, YYYY-MM (UTC days).")
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file to write [default: reports/report-<month>.html].",
)
@click.option(
    "--top", default=25, show_default=True, help="How many unallocated resources to list."
)
def report(month: str, out_path: Path | None, top: int) -> None:
    """Write the month's chargeback report: bill, invoice bridge, teams, idle, health."""
    try:
        parse_month(month)
    except ReportError as exc:
        raise click.BadParameter(str(exc), param_hint="--month") from exc
    out_path = out_path or Path("reports") / f"report-{month}.html"
    from kubeledger.serving import serving_path

    source = serving_path() if serving_path().exists() else warehouse_path()
    click.secho(f"==> report for {month} from {source}", bold=True)
    con = open_warehouse_read_only()
    try:
        data = load_report_data(con, month, top=top)
    except ReportError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        con.close()
    write_report(data, out_path)
    bill = data.bill
    click.echo(
        f"    org bill {money(bill.total, bill.currency)} ({bill.state.upper()}, "
        f"status {bill.status}), {bill.line_count} lines"
    )
    if data.headline:
        click.echo(
            f"    idle {pct(data.headline.get('idle_ratio'))}, ownership coverage "
            f"{pct(data.headline.get('ownership_coverage_ratio'))}, reconciled "
            f"{pct(data.headline.get('reconciled_ratio'))}"
        )
    for line in console_lines(data.backing, lambda amount: money(amount, bill.currency)):
        click.echo(f"    {line}")
    for section, reason in sorted(data.missing.items()):
        click.echo(f"    {section}: not available ({reason})")
    click.echo(f"    wrote {out_path} ({out_path.stat().st_size / 1e6:.1f} MB, opens offline)")
