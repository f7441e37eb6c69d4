"""SQL text helpers: quoting, and the expressions that decide whether a value can be read."""

from __future__ import annotations

# Timestamp forms the loader accepts besides everything DuckDB casts to `timestamptz`
# (ISO 8601 with `T` or a space, `Z` or an offset, a bare date, a trailing ` UTC`).
# Staging must read the same forms; `parse_timestamp_sql` is the reference.
STRPTIME_FORMATS: tuple[str, ...] = (
    "%Y-%m-%d %H:%M:%S %z UTC",  # koku-metrics-operator (Go): 2026-10-06 18:00:00 +0000 UTC
    "%Y-%m-%d %H:%M:%S.%n %z UTC",  # the same with fractional seconds
    "%m/%d/%Y",  # Azure cost details: 10/06/2026
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%Y %I:%M:%S %p",
)


def ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def lit(value: str) -> str:
    """A quoted SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


# What producers write for "no value": the empty string, and the text NULL (the FOCUS sample
# data and exports written from SQL engines). Every reader turns a whole value equal to one of
# them into SQL NULL; `NULL` inside a value (a label `team:NULL`) is kept.
NULL_STRINGS: tuple[str, ...] = ("", "NULL")


def null_if_missing_sql(expr: str) -> str:
    """`expr` (varchar), NULL when it is one of NULL_STRINGS."""
    missing = ", ".join(lit(v) for v in NULL_STRINGS)
    return f"(case when {expr} in ({missing}) then null else {expr} end)"


def is_blank_sql(expr: str) -> str:
    return f"({expr} is null or trim({expr}) = '')"


# Go's `-0700 MST` layout with any zone abbreviation (`+0200 CEST`): the offset decides, the
# abbreviation (which DuckDB does not know) is dropped.
_GO_ZONE_SUFFIX = r"'^(.* [+-][0-9]{4}) [A-Za-z+-][A-Za-z0-9+-]*$'"
_GO_FORMATS = "['%Y-%m-%d %H:%M:%S %z', '%Y-%m-%d %H:%M:%S.%n %z']"


def parse_timestamp_sql(expr: str) -> str:
    """`expr` (varchar) as a `timestamptz`, NULL when it is no timestamp in a known form."""
    formats = "[" + ", ".join(lit(f) for f in STRPTIME_FORMATS) + "]"
    return (
        f"coalesce(try_cast(trim({expr}) as timestamptz), try_strptime(trim({expr}), {formats}), "
        f"try_strptime(regexp_extract(trim({expr}), {_GO_ZONE_SUFFIX}, 1), {_GO_FORMATS}))"
    )


def parse_number_sql(expr: str) -> str:
    """`expr` (varchar) as a finite `double`, NULL when it is no number."""
    return f"(case when isfinite(try_cast({expr} as double)) then try_cast({expr} as double) end)"


def readable_timestamp_sql(expr: str) -> str:
    """True when `expr` is empty or a timestamp the pipeline can read."""
    return f"({parse_timestamp_sql(expr)} is not null or {is_blank_sql(expr)})"


def readable_number_sql(expr: str) -> str:
    """True when `expr` is empty or a finite number (negative and huge numbers are readable)."""
    # The cast comes first: most values are numbers, and `or` skips rows already true.
    return f"(coalesce(isfinite(try_cast({expr} as double)), false) or {is_blank_sql(expr)})"


_US_DATE_FORMATS = "['%m/%d/%Y', '%m/%d/%Y %H:%M:%S', '%m/%d/%Y %I:%M:%S %p']"


def source_day_sql(expr: str) -> str:
    """The day a usage report's row is for, as the loader keeps it (`_source_day`): the date
    the timestamp text starts with, else the UTC date of the instant it reads as.

    Cheap on purpose (it runs over every loaded usage row). A timestamp with an offset starts
    with its local date, at most one day from its UTC date (offsets are under 24 hours), so a
    day's run keeps the raw rows of its days and one day either side by this column, then
    filters exactly on the day staging parses.
    """
    return (
        f"coalesce(try_cast(left(trim({expr}), 10) as date), "
        f"cast(timezone('UTC', {parse_timestamp_sql(expr)}) as date))"
    )


def period_day_sql(expr: str) -> str:
    """The date of a billing-period timestamp as `YYYY-MM-DD`, from its text.

    Cheap on purpose (it runs over whole raw tables when a period is restated): ISO forms are
    cut to their first ten characters, US `MM/DD/YYYY` forms are parsed.
    """
    return (
        f"(case when {expr} like '%/%' "
        f"then strftime(try_strptime(trim({expr}), {_US_DATE_FORMATS}), '%Y-%m-%d') "
        f"else nullif(left(trim({expr}), 10), '') end)"
    )


def period_month_sql(expr: str) -> str:
    """The first day of the month of a charge timestamp as `YYYY-MM-01`, from its text."""
    return (
        f"(case when {expr} like '%/%' "
        f"then strftime(try_strptime(trim({expr}), {_US_DATE_FORMATS}), '%Y-%m-01') "
        f"else nullif(left(trim({expr}), 7) || '-01', '-01') end)"
    )


# staging's billing_line_id (macros/portable/surrogate_key.sql over source_file and
# source_row_number): md5 of `_source_file | _row_number`, nulls as '<null>'. A raw billing row
# with this hash in sealed.sealed_billing_line_refs is a line a sealed bill references.
BILLING_LINE_ID_SQL = (
    "md5(coalesce(cast(_source_file as varchar), '<null>') || '|' || "
    "coalesce(cast(cast(_row_number as bigint) as varchar), '<null>'))"
)
