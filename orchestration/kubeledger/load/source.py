"""What a reader hands the loader: a relation and one varchar expression per source column."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceColumn:
    """One column as the file names it (nested fields flattened to `a_b`) and its SQL."""

    name: str
    expr: str


@dataclass(frozen=True)
class Source:
    """A DuckDB table expression over one file, in the file's row order."""

    relation: str
    columns: tuple[SourceColumn, ...]
