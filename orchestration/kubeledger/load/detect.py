"""Recognise a landing file: its container (CSV, Parquet, JSON; gzip or not) and its format.

Formats are told apart by their header (column names, in any order, case-insensitive), never
by the file name. Only export manifests are recognised by name.
"""

from __future__ import annotations

import csv
import io
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb

from kubeledger.load.errors import LoadError
from kubeledger.load.formats import FORMATS, IGNORED_FORMATS, FormatSpec, IgnoredFormat
from kubeledger.load.sql import lit

Family = Literal["csv", "parquet", "json"]

_SNIFF_BYTES = 1 << 20
_PARQUET_MAGIC = b"PAR1"
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class JsonField:
    """A top-level JSON key: whether it holds objects, and the keys seen inside them."""

    name: str
    is_object: bool
    subkeys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sniffed:
    """What the first bytes (and, for JSON, one pass over the keys) tell about a file."""

    family: Family
    compression: Literal["none", "gzip"]
    header: tuple[str, ...]
    json_format: Literal["newline_delimited", "array"] | None = None
    json_fields: tuple[JsonField, ...] = ()


def is_manifest(path: Path) -> bool:
    """Export manifests (koku, AWS CUR `*-Manifest.json`, Azure `manifest.json`) are not data."""
    return path.name.lower().endswith("manifest.json")


def sniff(con: duckdb.DuckDBPyConnection, path: Path, source_file: str) -> Sniffed:
    """The container and header of `path`; LoadError when it cannot be read at all."""
    with path.open("rb") as fh:
        head = fh.read(_SNIFF_BYTES)
    if not head:
        raise LoadError(source_file, "is empty (no header line).", fix="Remove it or re-export it.")
    if head.startswith(_PARQUET_MAGIC):
        return _sniff_parquet(con, path, source_file)
    if head.startswith(_ZIP_MAGIC):
        raise LoadError(
            source_file,
            "is a ZIP archive.",
            fix="Unzip it into the landing folder; CSV, .csv.gz, Parquet and JSON are read.",
        )
    compression: Literal["none", "gzip"] = "none"
    if head.startswith(_GZIP_MAGIC):
        compression = "gzip"
        head = _gunzip_head(head, source_file)
        if len(head) > 262 and head[257:262] == b"ustar":
            raise LoadError(
                source_file,
                "is a tar archive.",
                fix="Extract it into the landing folder (koku-metrics-operator packages are "
                "tar.gz files holding a manifest and CSV reports).",
            )
    if path.suffix.lower() == ".parquet":
        raise LoadError(
            source_file,
            "is named .parquet but is not a Parquet file (it does not start with PAR1).",
            fix="Re-export or re-download it.",
        )
    text_start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text_start[:1] in (b"{", b"["):
        json_format: Literal["newline_delimited", "array"] = (
            "array" if text_start[:1] == b"[" else "newline_delimited"
        )
        return _sniff_json(con, path, source_file, compression, json_format)
    return Sniffed("csv", compression, _csv_header(head, source_file))


def _gunzip_head(head: bytes, source_file: str) -> bytes:
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SNIFF_BYTES)
    except zlib.error as exc:
        raise LoadError(
            source_file, f"is not a readable gzip file ({exc}).", fix="Re-download it."
        ) from exc


def _csv_header(head: bytes, source_file: str) -> tuple[str, ...]:
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # The sniffed chunk may end inside a multi-byte character; only the header matters.
        text = head[: exc.start].decode("utf-8-sig") if exc.start > 0 else ""
        if "\n" not in text:
            raise LoadError(
                source_file,
                "is not UTF-8 text, Parquet or JSON.",
                fix="Export it as UTF-8 CSV (or Parquet).",
            ) from exc
    first = next(csv.reader(io.StringIO(text)), None)
    if not first or all(not name.strip() for name in first):
        raise LoadError(source_file, "has no header line.", fix="Re-export it with its header.")
    return tuple(name.strip() for name in first)


def _sniff_parquet(con: duckdb.DuckDBPyConnection, path: Path, source_file: str) -> Sniffed:
    try:
        rows = con.execute(f"describe select * from read_parquet({lit(str(path))})").fetchall()
    except duckdb.Error as exc:
        raise LoadError(
            source_file,
            f"is not a readable Parquet file ({first_line(exc)}).",
            fix="It may be truncated: re-export or re-download it.",
        ) from exc
    return Sniffed("parquet", "none", tuple(r[0] for r in rows))


def _sniff_json(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    source_file: str,
    compression: Literal["none", "gzip"],
    json_format: Literal["newline_delimited", "array"],
) -> Sniffed:
    # One pass over the file: every top-level key, whether it holds objects, their keys.
    relation = (
        f"read_json_objects({lit(str(path))}, format = {lit(json_format)}, "
        f"compression = {lit('gzip' if compression == 'gzip' else 'none')})"
    )
    query = f"""
        with keyed as (
            select json, unnest(json_keys(json)) as k from {relation}
        ),
        typed as (
            select k, json_extract(json, '$."' || replace(k, '"', '\\"') || '"') as val
            from keyed
        ),
        subkeyed as (
            select
                k,
                json_type(val) as ty,
                unnest(
                    case when json_type(val) = 'OBJECT' then json_keys(val) else [null] end
                ) as sk
            from typed
        )
        select
            k,
            coalesce(bool_and(ty = 'OBJECT') filter (where ty <> 'NULL'), false) as is_object,
            list(distinct sk order by sk) filter (where sk is not null) as subkeys
        from subkeyed
        group by k
        order by k
    """
    try:
        rows = con.execute(query).fetchall()
    except duckdb.Error as exc:
        raise LoadError(
            source_file,
            f"is not readable JSON ({first_line(exc)}).",
            fix="It may be truncated: re-export or re-download it.",
        ) from exc
    # A key holding an object in every row where it is not null is a record (flattened for
    # formats that flatten); a key mixing objects and other values is kept as JSON text.
    fields = [
        JsonField(name, bool(is_object), tuple(subkeys or ()) if is_object else ())
        for name, is_object, subkeys in rows
    ]
    return Sniffed(
        "json",
        compression,
        tuple(f.name for f in fields),
        json_format=json_format,
        json_fields=tuple(fields),
    )


# Column names of the Google Cloud billing export flattened to CSV (BigQuery's console writes
# nested fields as `service.description`); the `credits` array cannot be written to CSV.
_GCP_DOTTED = {
    "service.description",
    "service.id",
    "sku.description",
    "sku.id",
    "project.id",
    "resource.name",
    "resource.global_name",
    "location.region",
    "invoice.month",
}


def match_format(header: tuple[str, ...], source_file: str) -> FormatSpec | IgnoredFormat:
    """The format whose recognising columns are all in `header`; LoadError when none is."""
    present = {name.lower() for name in header}
    dotted = sorted(name for name in present & _GCP_DOTTED if "." in name)
    if dotted and "usage_start_time" in present:
        raise LoadError(
            source_file,
            "is a Google Cloud billing export saved as CSV with dotted column names "
            f"({', '.join(dotted[:3])}, ...): the nested fields were flattened and the "
            "credits array is lost.",
            fix="Export the detailed usage cost table (gcp_billing_export_resource_v1_...) "
            "as newline-delimited JSON or Parquet (BigQuery: Export -> Export to GCS, format "
            "JSON or Parquet) and put that file in the landing folder.",
        )
    for ignored in IGNORED_FORMATS:
        if all(c.lower() in present for c in ignored.recognise):
            return ignored
    for spec in FORMATS:
        if any(c.lower() in present for c in spec.exclude):
            continue
        if any(all(c.lower() in present for c in group) for group in spec.recognise):
            return spec
    expected = "; ".join(f"{spec.title}: {' + '.join(spec.recognise[0])}" for spec in FORMATS)
    shown = ", ".join(_shorten(name) for name in header[:8]) + (", ..." if len(header) > 8 else "")
    raise LoadError(
        source_file,
        f"has a header no known format has (columns: {shown}).",
        fix=f"Expected one of: {expected}. Move files that are not landing data out of the "
        "landing folder, or check that the export kept its header row.",
    )


def _shorten(name: str, limit: int = 40) -> str:
    name = " ".join(name.split())
    return name if len(name) <= limit else name[: limit - 3] + "..."


def first_line(exc: BaseException) -> str:
    """The first meaningful line of a DuckDB error, without the error class prefix."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for prefix in ("Invalid Input Error: ", "IO Error: ", "Conversion Error: ", "Binder Error: "):
        text = text.removeprefix(prefix)
    return text
