"""Map a file's columns onto its raw table: known columns by name, the rest into JSON."""

from __future__ import annotations

from dataclasses import dataclass

from kubeledger.load.formats import FormatSpec
from kubeledger.load.source import SourceColumn
from kubeledger.load.sql import lit


@dataclass(frozen=True)
class ColumnPlan:
    """The stage select list of one file: every raw column of its format, then `_extra`."""

    select: tuple[tuple[str, str], ...]
    present: frozenset[str]
    missing_required: tuple[str, ...]
    folded: tuple[str, ...]
    extra: tuple[str, ...]


def json_object_sql(pairs: list[tuple[str, str]]) -> str:
    """A JSON object of the non-empty values among `(key, varchar expr)` pairs; NULL if none."""
    if not pairs:
        return "null::varchar"
    entries = ", ".join(f"{{'k': {lit(key)}, 'v': {expr}}}" for key, expr in pairs)
    kept = f"list_filter([{entries}], lambda e: nullif(trim(e.v), '') is not null)"
    return f"nullif(to_json(map_from_entries({kept}))::varchar, '{{}}')"


def plan_columns(spec: FormatSpec, source: tuple[SourceColumn, ...]) -> ColumnPlan:
    known = {name.lower(): name for name in spec.columns}
    taken: dict[str, str] = {}
    folded: list[tuple[str, str]] = []
    extra: list[tuple[str, str]] = []
    extra_keys: set[str] = set()
    fold_prefix = spec.fold_prefix.lower() if spec.fold_prefix else None
    fold_column_present = bool(
        spec.fold_column and any(c.name.lower() == spec.fold_column.lower() for c in source)
    )
    # An alias fills its column only when the file does not have the column itself.
    header = {col.name.lower() for col in source}
    aliases = {
        alias.lower(): column
        for alias, column in spec.aliases
        if column.lower() not in header and alias.lower() != column.lower()
    }
    for col in source:
        canonical = known.get(col.name.lower())
        aliased = aliases.get(col.name.lower())
        if aliased is not None and aliased not in taken:
            taken[aliased] = col.expr
            if canonical is not None and canonical not in taken:
                taken[canonical] = col.expr
        elif canonical is not None and canonical not in taken:
            taken[canonical] = col.expr
        elif (
            fold_prefix
            and not fold_column_present
            and col.name.lower().startswith(fold_prefix)
            and len(col.name) > len(fold_prefix)
        ):
            folded.append((col.name[len(fold_prefix) :], col.expr))
        else:
            key = col.name
            n = 2
            while key in extra_keys:
                key = f"{col.name}#{n}"
                n += 1
            extra_keys.add(key)
            extra.append((key, col.expr))

    select: list[tuple[str, str]] = []
    for name in spec.columns:
        if name in taken:
            select.append((name, taken[name]))
        elif name == spec.fold_column and folded:
            select.append((name, json_object_sql(_unique(folded))))
        else:
            select.append((name, "null::varchar"))
    select.append(("_extra", json_object_sql(extra)))

    present = set(taken)
    if folded and spec.fold_column:
        present.add(spec.fold_column)
    missing = tuple(
        " or ".join(group)
        for group in spec.required
        if not any(alternative in present for alternative in group)
    )
    return ColumnPlan(
        select=tuple(select),
        present=frozenset(present),
        missing_required=missing,
        folded=tuple(key for key, _ in folded),
        extra=tuple(key for key, _ in extra),
    )


def _unique(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: set[str] = set()
    out = []
    for key, expr in pairs:
        if key not in seen:
            seen.add(key)
            out.append((key, expr))
    return out
