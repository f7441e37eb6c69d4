"""Write one month of the marts to Parquet or CSV files with a manifest.

Each mart becomes `<mart>.<format>`: its rows for the month, the columns of `schema.MARTS` in
their order and types, sorted by the mart's key. A mart that is not in the warehouse (the
health mart before it is built, say) is still written, empty, with the same columns, and the
manifest marks it `available: false`, so the set of files and their schema never change.
`manifest.json` lists every file with its row count, columns, types and SHA-256.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from kubeledger import __version__
from kubeledger.export import focus
from kubeledger.export.month import ExportError, month_bounds
from kubeledger.export.schema import (
    EXPORT_FORMAT_VERSION,
    MARTS,
    MARTS_BY_NAME,
    MONTH_DATE_COLUMNS,
    MartExport,
)

FORMATS = ("parquet", "csv")


@dataclass
class ExportResult:
    out_dir: Path
    manifest_path: Path
    files: list[dict[str, Any]] = field(default_factory=list)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def relation_columns(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> list[str] | None:
    rows = con.execute(
        "select column_name from information_schema.columns "
        "where table_schema = ? and table_name = ? order by ordinal_position",
        [schema, name],
    ).fetchall()
    return [row[0] for row in rows] or None


def _column_sql(name: str, type_name: str) -> str:
    if type_name == "JSON":
        return f"cast(to_json({_quote(name)}) as varchar) as {_quote(name)}"
    return f"cast({_quote(name)} as {type_name}) as {_quote(name)}"


def _null_sql(name: str, type_name: str) -> str:
    return f"cast(null as {'varchar' if type_name == 'JSON' else type_name}) as {_quote(name)}"


def month_filter(mart: MartExport, first: dt.date, last: dt.date, month: str) -> str:
    column = mart.month_column
    if column in MONTH_DATE_COLUMNS:
        return f"{column} = date {_literal(first.isoformat())}"
    if column == "run_days":
        return (
            f"first_day <= date {_literal(last.isoformat())} "
            f"and last_day >= date {_literal(first.isoformat())}"
        )
    return (
        f"{column} between date {_literal(first.isoformat())} and date {_literal(last.isoformat())}"
    )


def mart_query(con: duckdb.DuckDBPyConnection, mart: MartExport, month: str) -> tuple[str, bool]:
    """The SELECT that exports `mart` for `month`, and whether the mart exists."""
    first, last = month_bounds(month)
    present = relation_columns(con, mart.schema, mart.name)
    if present is None:
        columns = ", ".join(_null_sql(name, type_name) for name, type_name in mart.columns)
        return f"select {columns} where false", False
    missing = [name for name, _ in mart.columns if name not in present]
    if missing:
        raise ExportError(
            f"{mart.schema}.{mart.name} has no column {', '.join(missing)}: the export schema "
            "(orchestration/kubeledger/export/schema.py) lists it; rebuild the warehouse with "
            "`kubeledger build`, or update the export schema if the mart changed on purpose"
        )
    columns = ",\n    ".join(_column_sql(name, type_name) for name, type_name in mart.columns)
    order = ", ".join(_quote(name) for name in mart.order_by)
    sql = (
        f"select\n    {columns}\nfrom {mart.schema}.{mart.name}\n"
        f"where {month_filter(mart, first, last, month)}\norder by {order}"
    )
    return sql, True


# ISO 8601 with the UTC designator (every timestamp in the marts is UTC), microseconds kept.
CSV_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def copy_to(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    path: Path,
    file_format: str,
    *,
    timestamp_format: str = CSV_TIMESTAMP_FORMAT,
) -> int:
    """Write the query's rows to `path` (atomically); returns the row count."""
    temporary = path.with_name(f".{path.name}.partial")
    if file_format == "parquet":
        options = "format parquet, compression zstd"
    else:
        options = f"format csv, header true, timestampformat {_literal(timestamp_format)}"
    con.execute(f"copy ({sql}) to {_literal(str(temporary))} ({options})")
    os.replace(temporary, path)
    count = con.execute(f"select count(*) from ({sql})").fetchone()
    return int(count[0]) if count else 0


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_month(
    con: duckdb.DuckDBPyConnection,
    month: str,
    out_dir: Path,
    file_format: str = "parquet",
    *,
    marts: list[str] | None = None,
    billing_account_id: str = focus.DEFAULT_BILLING_ACCOUNT_ID,
    progress: Callable[[str], None] | None = None,
) -> ExportResult:
    """Export every mart of `schema.MARTS` (or the named ones) and the FOCUS file."""
    if file_format not in FORMATS:
        raise ExportError(f"--format must be one of {', '.join(FORMATS)}, got {file_format!r}")
    first, last = month_bounds(month)
    selected = list(MARTS)
    if marts:
        unknown = [name for name in marts if name not in MARTS_BY_NAME]
        if unknown:
            raise ExportError(
                f"unknown mart {', '.join(unknown)}; exportable: " + ", ".join(MARTS_BY_NAME)
            )
        selected = [MARTS_BY_NAME[name] for name in marts]
    # The bill the FOCUS file is made of, first: a sealed month that fails verification stops
    # the export before any file is written.
    charges = focus.charges_sql(con, month)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    result = ExportResult(out_dir=out_dir, manifest_path=out_dir / "manifest.json")
    for mart in selected:
        sql, available = mart_query(con, mart, month)
        path = out_dir / f"{mart.name}.{file_format}"
        rows = copy_to(con, sql, path, file_format)
        entry = {
            "name": mart.name,
            "relation": f"{mart.schema}.{mart.name}",
            "file": path.name,
            "rows": rows,
            "available": available,
            "month_filter": month_filter(mart, first, last, month),
            "order_by": list(mart.order_by),
            "columns": [_column_entry(name, type_name) for name, type_name in mart.columns],
            "sha256": sha256(path),
        }
        result.files.append(entry)
        if progress:
            note = "" if available else " (not in the warehouse: written empty)"
            progress(f"    {path.name}: {rows:,} rows{note}")
    focus_entry = focus.export_focus(
        con,
        month,
        out_dir,
        file_format,
        billing_account_id=billing_account_id,
        copy=copy_to,
        charges=charges,
    )
    focus_entry["sha256"] = sha256(out_dir / focus_entry["file"])
    if progress:
        progress(
            f"    {focus_entry['file']}: {focus_entry['rows']:,} rows (FOCUS "
            f"{focus.FOCUS_VERSION}, {focus_entry['bill_state'] or 'no'} bill, BilledCost "
            f"{focus_entry['total_billed_cost']})"
        )
    manifest = {
        "export_format_version": EXPORT_FORMAT_VERSION,
        "kubeledger_version": __version__,
        "month": month,
        "month_start_date": first.isoformat(),
        "month_end_date": last.isoformat(),
        "format": file_format,
        **_bill_state(con, month, progress),
        "exported_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "timestamps": "UTC",
        "files": result.files,
        "focus": focus_entry,
    }
    result.manifest_path.write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    return result


def _column_entry(name: str, type_name: str) -> dict[str, str]:
    if type_name == "JSON":
        return {"name": name, "type": "VARCHAR", "format": "json"}
    return {"name": name, "type": type_name}


def _bill_state(
    con: duckdb.DuckDBPyConnection, month: str, progress: Callable[[str], None] | None
) -> dict[str, Any]:
    """The month's bill state as the exported fct_bill_lines_monthly shows it, and the sealed
    bill's ID when the sealed store holds the month."""
    sealed_bill_id = None
    if relation_columns(con, "sealed", "sealed_bills"):
        row = con.execute(
            "select bill_id from sealed.sealed_bills where bill_month = ?", [month]
        ).fetchone()
        sealed_bill_id = row[0] if row else None
    state = None
    if relation_columns(con, "marts", "fct_bill_lines_monthly"):
        row = con.execute(
            "select min(bill_state) from marts.fct_bill_lines_monthly where bill_month = ?",
            [month_bounds(month)[0]],
        ).fetchone()
        state = row[0] if row else None
    if sealed_bill_id and state != "sealed" and progress:
        progress(
            f"    note: {month} is sealed ({sealed_bill_id}) but "
            "marts.fct_bill_lines_monthly still shows the draft; run `kubeledger build` "
            "to refresh it, then export again"
        )
    return {"bill_state": state, "sealed_bill_id": sealed_bill_id}
