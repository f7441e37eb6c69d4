"""CSV and .csv.gz files: every column read as varchar, in strict mode.

The header was already parsed (detect.sniff); DuckDB's own sniffer is off so that a ragged or
unterminated row is an error rather than a silently different dialect. An empty field and the
text NULL are NULL (sql.NULL_STRINGS).
"""

from __future__ import annotations

from pathlib import Path

from kubeledger.load.detect import Sniffed
from kubeledger.load.source import Source, SourceColumn
from kubeledger.load.sql import NULL_STRINGS, lit

# Long lines are normal in CUR files with many tag columns.
_MAX_LINE_SIZE = 64 * 1024 * 1024


def csv_relation(paths: list[Path], sniffed: Sniffed, *, filename: bool = False) -> str:
    """`read_csv` over one file, or over several files of the same header and compression in
    order (with `filename`, each row names its file in the column `filename`)."""
    positional = [f"c{i}" for i in range(len(sniffed.header))]
    columns_arg = "{" + ", ".join(f"{lit(p)}: 'VARCHAR'" for p in positional) + "}"
    files = lit(str(paths[0])) if len(paths) == 1 else f"[{', '.join(lit(str(p)) for p in paths)}]"
    return (
        f"read_csv({files}, columns = {columns_arg}, header = true, "
        "auto_detect = false, delim = ',', quote = '\"', escape = '\"', strict_mode = true, "
        f"null_padding = false, nullstr = [{', '.join(lit(v) for v in NULL_STRINGS)}], "
        f"compression = {lit(sniffed.compression)}, "
        f"max_line_size = {_MAX_LINE_SIZE}, encoding = 'utf-8'"
        + (", filename = true)" if filename else ")")
    )


def csv_source(path: Path, sniffed: Sniffed) -> Source:
    positional = [f"c{i}" for i in range(len(sniffed.header))]
    relation = csv_relation([path], sniffed)
    columns = tuple(
        SourceColumn(name or f"_column_{i + 1}", positional[i])
        for i, name in enumerate(sniffed.header)
    )
    return Source(relation, columns)
