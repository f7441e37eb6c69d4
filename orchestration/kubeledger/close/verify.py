"""Verify the seals: recompute every hash from the warehouse and from the copies, and compare.

For each sealed artifact (a bill or a correction) of the months asked for:
- its rows in the warehouse hash to the content hash recorded when it was sealed;
- its copy exists, every file matches its sha256, the manifest states the same hashes and
  chain, and the copy's rows hash to the same content hash;
- row by row, the warehouse and the copy hold the same rows (a difference names the month,
  the slice, the line and the column);
- every slice's lines sum to its billed target (`=` on decimal(38, 3)).
And for the whole store: the chain links (each digest's previous hash is the last one's
chain hash, recomputed), every bill and correction has a digest, every finalized copy has a
seal, and the sealed tables still have the constraints this version creates (a table dropped
and recreated without them is named).

`verify_seals` returns the problems; `require_verified` raises VerificationError, for the
commands that present a month (bill, explain, report, the Dagster close).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb

from kubeledger.close import digest
from kubeledger.close.sealed_schema import (
    SCHEMA,
    SEALED_TABLES,
    VerificationError,
    sealed_schema_exists,
)
from kubeledger.currency import minor_unit_digits
from kubeledger.load.sql import ident, lit

MAX_ROW_PROBLEMS = 20


@dataclass
class VerifyReport:
    """What was checked and what differs; `ok` when nothing does."""

    months: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_seals(
    con: duckdb.DuckDBPyConnection, month: str | None = None, *, finalize: bool = True
) -> VerifyReport:
    """Check every seal (or only `month`'s artifacts, plus the whole chain and structure)."""
    report = VerifyReport()
    if not sealed_schema_exists(con):
        return report
    _check_structure(con, report)
    if report.problems:
        return report  # a table without its columns cannot be hashed
    digests = _digests(con)
    _check_chain(digests, report)
    _check_every_artifact_has_a_digest(con, digests, month, report)
    root = digest.copy_root(con)
    _check_orphan_copies(root, digests, month, report)
    for row in digests:
        if month is not None and row["bill_month"] != month:
            continue
        report.artifacts.append(row["artifact_id"])
        if row["bill_month"] not in report.months:
            report.months.append(row["bill_month"])
        _check_artifact(con, root.parent, row, report, finalize=finalize)
    _check_balanced(con, month, report)
    return report


def require_verified(con: duckdb.DuckDBPyConnection, month: str) -> VerifyReport:
    """Raise VerificationError unless `month`'s seal (if any) and the chain verify."""
    report = verify_seals(con, month)
    if not report.ok:
        shown = report.problems[:10]
        more = len(report.problems) - len(shown)
        raise VerificationError(
            f"month {month} fails verification, so it is not presented: "
            + "; ".join(shown)
            + (f"; and {more} more" if more > 0 else "")
            + ". Run `kubeledger verify` for every difference; a sealed month's rows must be "
            "restored from its copy (the copy is the evidence, the warehouse was edited).",
            problems=report.problems,
        )
    return report


# --- the store as a whole -------------------------------------------------------------------


def _check_structure(con: duckdb.DuckDBPyConnection, report: VerifyReport) -> None:
    present = {
        row[0]
        for row in con.execute(
            "select table_name from information_schema.tables where table_schema = ?",
            [SCHEMA],
        ).fetchall()
    }
    columns: dict[str, list[str]] = {}
    for table, column in con.execute(
        "select table_name, column_name from information_schema.columns "
        "where table_schema = ? order by table_name, ordinal_position",
        [SCHEMA],
    ).fetchall():
        columns.setdefault(table, []).append(column)
    for table in SEALED_TABLES:
        if table not in present:
            report.problems.append(f"table {SCHEMA}.{table} is missing (dropped?)")
        elif columns.get(table) != digest.canonical_schema()[table]:
            report.problems.append(
                f"table {SCHEMA}.{table} was recreated with other columns: "
                f"{', '.join(columns.get(table, []))}"
            )
    actual = set(digest.constraints(con))
    for table, kind, text in sorted(digest.canonical_constraints() - actual):
        if table in present:
            report.problems.append(
                f"table {SCHEMA}.{table} lost its {kind} constraint {text} (dropped and recreated?)"
            )


def _digests(con: duckdb.DuckDBPyConnection) -> list[dict]:
    cursor = con.execute(f"select * from {SCHEMA}.seal_digests order by sequence_number")
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _check_chain(digests: list[dict], report: VerifyReport) -> None:
    previous = None
    for number, row in enumerate(digests, start=1):
        name = f"{row['bill_month']} {row['artifact_id']}"
        if row["sequence_number"] != number:
            report.problems.append(
                f"{name}: seal number {row['sequence_number']}, expected {number} "
                "(a seal before it was removed?)"
            )
        if row["previous_chain_hash"] != previous:
            report.problems.append(
                f"{name}: chained to {row['previous_chain_hash']}, but the seal before it "
                f"ends the chain at {previous}"
            )
        expected = digest.chain_hash(
            row["previous_chain_hash"], row["artifact_id"], row["content_hash"]
        )
        if row["chain_hash"] != expected:
            report.problems.append(f"{name}: chain hash {row['chain_hash']} <> {expected}")
        previous = row["chain_hash"]


def _check_every_artifact_has_a_digest(
    con: duckdb.DuckDBPyConnection, digests: list[dict], month: str | None, report: VerifyReport
) -> None:
    known = {row["artifact_id"] for row in digests}
    for table, column in (("sealed_bills", "bill_id"), ("correction_bills", "correction_id")):
        for artifact_id, bill_month in con.execute(
            f"select {column}, bill_month from {SCHEMA}.{table} order by 2, 1"
        ).fetchall():
            if artifact_id not in known and month in (None, bill_month):
                report.problems.append(
                    f"{bill_month} {artifact_id}: in {SCHEMA}.{table} but never sealed (no "
                    "digest, no copy): inserted behind the close's back"
                )
    for row in digests:
        table = "sealed_bills" if row["artifact_kind"] == "bill" else "correction_bills"
        column = "bill_id" if row["artifact_kind"] == "bill" else "correction_id"
        (count,) = con.execute(
            f"select count(*) from {SCHEMA}.{table} where {column} = ?", [row["artifact_id"]]
        ).fetchone()
        if count != 1 and month in (None, row["bill_month"]):
            report.problems.append(
                f"{row['bill_month']} {row['artifact_id']}: sealed, but {count} rows in "
                f"{SCHEMA}.{table} now"
            )


def _check_orphan_copies(
    root: Path, digests: list[dict], month: str | None, report: VerifyReport
) -> None:
    known = {(row["bill_month"], row["artifact_id"]) for row in digests}
    if not root.exists():
        return
    for folder in sorted(root.glob("*/*")):
        bill_month = folder.parent.name
        if month is not None and bill_month != month:
            continue
        if ".interrupted-" in folder.name:
            report.notes.append(f"{folder}: copy of a seal that never committed (kept aside)")
            continue
        if (bill_month, folder.name) in known:
            continue
        if (folder / digest.MANIFEST).exists():
            report.problems.append(
                f"{bill_month} {folder.name}: a sealed copy exists at {folder} but the "
                "warehouse has no such seal (deleted?)"
            )
        else:
            report.notes.append(f"{folder}: copy of a seal that never committed")


# --- one artifact ---------------------------------------------------------------------------


def _check_artifact(
    con: duckdb.DuckDBPyConnection,
    base: Path,
    row: dict,
    report: VerifyReport,
    *,
    finalize: bool,
) -> None:
    kind, artifact_id = row["artifact_kind"], row["artifact_id"]
    name = f"{row['bill_month']} {artifact_id}"
    content, _per_table = digest.content_hash(con, kind, artifact_id)
    if content != row["content_hash"]:
        report.problems.append(
            f"{name}: its rows in the warehouse no longer hash to the sealed content hash"
        )
    folder = base / row["copy_path"]
    manifest = _read_manifest(folder, row, report, finalize=finalize)
    if manifest is None:
        return
    for key in ("content_hash", "previous_chain_hash", "chain_hash", "sequence_number"):
        if manifest.get(key) != row[key]:
            report.problems.append(
                f"{name}: the copy's {key} is {manifest.get(key)}, the warehouse's {row[key]}"
            )
    sums_ok = _check_files(folder, manifest, name, report)
    if not sums_ok:
        return
    copied, _ = digest.content_hash(con, kind, artifact_id, folder)
    if copied != manifest["content_hash"]:
        report.problems.append(f"{name}: the copy's rows do not hash to its manifest")
    for table in digest.artifact_tables(kind):
        _diff_rows(con, table, artifact_id, folder / table.file, name, report)


def _read_manifest(folder: Path, row: dict, report: VerifyReport, *, finalize: bool) -> dict | None:
    name = f"{row['bill_month']} {row['artifact_id']}"
    manifest_path = folder / digest.MANIFEST
    pending = folder / digest.PENDING_MANIFEST
    if not manifest_path.exists() and pending.exists():
        manifest = json.loads(pending.read_text())
        if manifest.get("chain_hash") == row["chain_hash"] and finalize:
            # The seal committed but its process stopped before publishing the copy.
            digest.finalize(folder)
            report.notes.append(f"{name}: finalized the copy of a seal interrupted after commit")
        elif manifest.get("chain_hash") != row["chain_hash"]:
            report.problems.append(f"{name}: the pending copy at {folder} is of another seal")
            return None
        return manifest
    if not manifest_path.exists():
        report.problems.append(f"{name}: its sealed copy is missing ({folder})")
        return None
    try:
        return json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        report.problems.append(f"{name}: the copy's manifest cannot be read ({exc})")
        return None


def _check_files(folder: Path, manifest: dict, name: str, report: VerifyReport) -> bool:
    ok = True
    for table, entry in sorted(manifest.get("tables", {}).items()):
        path = folder / entry["file"]
        if not path.exists():
            report.problems.append(f"{name}: the copy of {table} is missing ({path})")
            ok = False
        elif digest.file_sha256(path) != entry["file_sha256"]:
            report.problems.append(f"{name}: the copy of {table} ({path}) was changed")
            ok = False
    sums = folder / digest.SUMS
    if sums.exists():
        for line in sums.read_text().splitlines():
            expected, _, file_name = line.partition("  ")
            path = folder / file_name
            if not path.exists() or digest.file_sha256(path) != expected:
                report.problems.append(f"{name}: {path} does not match {sums}")
                ok = False
    return ok


def _describe_key(values: dict) -> str:
    parts = []
    if values.get("cluster_id") is not None and values.get("cost_family") is not None:
        parts.append(f"slice {values['cluster_id']}/{values['cost_family']}")
    if values.get("line_id") is not None:
        parts.append(f"line {values['line_id']}")
    if values.get("billing_line_id") is not None:
        parts.append(f"billing line {values['billing_line_id']}")
    return ", ".join(parts) or "the bill row"


def _diff_rows(
    con: duckdb.DuckDBPyConnection,
    table: digest.ArtifactTable,
    artifact_id: str,
    copy_file: Path,
    name: str,
    report: VerifyReport,
) -> None:
    """Name every row that differs between the warehouse and the copy, column by column."""
    columns = digest.canonical_schema()[table.name]
    text = digest.row_text_sql(table)
    keys = ", ".join(ident(column) for column in table.key)
    join = " and ".join(
        f"warehouse.{ident(column)} is not distinct from copy.{ident(column)}"
        for column in table.key
    )
    rows = con.execute(
        f"""
        with
        warehouse as (
            select {keys}, {text} as row_text
            from {digest.rows_relation(table, artifact_id)} as rows_
        ),
        copy as (
            select {keys}, {text} as row_text
            from (select * from read_parquet({lit(str(copy_file))})) as rows_
        )
        select warehouse.row_text, copy.row_text
        from warehouse
        full outer join copy on {join}
        where warehouse.row_text is distinct from copy.row_text
        order by coalesce(warehouse.row_text, copy.row_text)
        limit {MAX_ROW_PROBLEMS + 1}
        """
    ).fetchall()
    for count, (in_warehouse, in_copy) in enumerate(rows):
        if count == MAX_ROW_PROBLEMS:
            report.problems.append(f"{name}: more rows of {table.name} differ")
            break
        current = _values(columns, in_warehouse)
        sealed = _values(columns, in_copy)
        where = f"{name}: {SCHEMA}.{table.name}, {_describe_key(current or sealed)}"
        digits = _minor_digits(con, current or sealed)
        if current is None:
            report.problems.append(f"{where}: sealed, but missing in the warehouse (deleted)")
        elif sealed is None:
            report.problems.append(f"{where}: in the warehouse, but not in the seal (inserted)")
        else:
            changed = [
                f"{column} is {_amount(current[column], column, digits)} in the warehouse, "
                f"{_amount(sealed[column], column, digits)} as sealed"
                for column in columns
                if current[column] != sealed[column]
            ]
            report.problems.append(f"{where}: {'; '.join(changed)}")


def _minor_digits(con: duckdb.DuckDBPyConnection, values: dict) -> int:
    """The minor-unit digits of the currency a row's slice is billed in (its sealed slice,
    else its bill, else USD's 2)."""
    currency = con.execute(
        f"""
        select coalesce(
            (select max(currency) from {SCHEMA}.sealed_bill_clusters
             where cluster_id = ? and (? is null or bill_id = ?)),
            (select max(currency) from {SCHEMA}.sealed_bills where ? is null or bill_id = ?)
        )
        """,
        [values.get("cluster_id"), *[values.get("bill_id")] * 4],
    ).fetchone()[0]
    return minor_unit_digits(currency or "USD")


def _amount(text: str | None, column: str, digits: int) -> str | None:
    """A money value as the bill shows it: at the currency's minor unit (`34.34`, not the
    column's `34.340`) when that loses nothing; other values, and money with more digits than
    the unit (a tampered `34.345`), as stored."""
    if text is None or column not in digest.money_columns():
        return text
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    shown = value.quantize(Decimal(1).scaleb(-digits))
    return str(shown) if shown == value else text


def _values(columns: list[str], row_text: str | None) -> dict | None:
    if row_text is None:
        return None
    values = row_text.split("\x1f")
    return {
        column: (None if value == digest.NULL_TEXT else value)
        for column, value in zip(columns, values, strict=False)
    }


def _check_balanced(
    con: duckdb.DuckDBPyConnection, month: str | None, report: VerifyReport
) -> None:
    params = [] if month is None else [month]
    where = "" if month is None else "where slices.bill_month = ?"
    for bill_month, cluster, family, currency, target, billed in con.execute(
        f"""
        select slices.bill_month, slices.cluster_id, slices.cost_family, slices.currency,
            slices.target_cost, coalesce(sum(lines.billed_cost), 0)
        from {SCHEMA}.sealed_bill_clusters as slices
        left join {SCHEMA}.sealed_bill_lines as lines
            on slices.bill_id = lines.bill_id
            and slices.cluster_id = lines.cluster_id
            and slices.cost_family = lines.cost_family
        {where}
        group by all
        having not (coalesce(sum(lines.billed_cost), 0) = slices.target_cost)
        order by 1, 2, 3
        """,
        params,
    ).fetchall():
        digits = minor_unit_digits(currency or "USD")
        billed, target = (_amount(str(v), "billed_cost", digits) for v in (billed, target))
        report.problems.append(
            f"{bill_month}: slice {cluster}/{family}: lines sum to {billed}, target {target}"
        )
