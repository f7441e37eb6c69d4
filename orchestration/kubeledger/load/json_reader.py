"""Newline-delimited JSON (and JSON arrays), plain or gzip: the Google Cloud export.

The keys were collected by detect.sniff. Every value is read as varchar (numbers as DuckDB
renders them, nested arrays and objects as JSON text), except that for formats that flatten,
an object-valued key becomes one column per inner key: `service.description` ->
`service_description`. A value that is empty or the text NULL is NULL (sql.NULL_STRINGS).
"""

from __future__ import annotations

from pathlib import Path

from kubeledger.load.detect import Sniffed
from kubeledger.load.source import Source, SourceColumn
from kubeledger.load.sql import ident, lit, null_if_missing_sql


def json_source(path: Path, sniffed: Sniffed, *, flatten: bool) -> Source:
    declared: list[str] = []
    columns: list[SourceColumn] = []
    for field in sniffed.json_fields:
        if flatten and field.is_object:
            members = ", ".join(f"{ident(sub)} VARCHAR" for sub in field.subkeys)
            declared.append(f"{lit(field.name)}: {lit(f'STRUCT({members})')}")
            for sub in field.subkeys:
                columns.append(
                    SourceColumn(
                        f"{field.name}_{sub}",
                        null_if_missing_sql(f"{ident(field.name)}.{ident(sub)}"),
                    )
                )
        else:
            declared.append(f"{lit(field.name)}: 'VARCHAR'")
            columns.append(SourceColumn(field.name, null_if_missing_sql(ident(field.name))))
    relation = (
        f"read_json({lit(str(path))}, format = {lit(sniffed.json_format or 'newline_delimited')}, "
        f"compression = {lit(sniffed.compression)}, columns = {{{', '.join(declared)}}})"
    )
    return Source(relation, tuple(columns))
