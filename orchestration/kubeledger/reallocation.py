"""Days whose billing lines changed since they were allocated are allocated again (SPEC §9).

When a day is allocated, the fingerprint of each of its billing account-days
(int_billing_account_days_fingerprinted) is stored in `ops.allocated_billing_fingerprints`
and the day in `ops.allocated_days`. Before a range build, a close or a Dagster ledger run,
the fingerprint model is rebuilt from the current billing lines (alone with its inputs, no
incremental model) and compared with what was stored: a day allocated before whose
account-days differ — restated, delivered late, or gone — is *changed*. Changed days inside the
re-run window (`reruns.max_days_back` before the as-of date) are allocated again in the same
dbt run (var `reallocate_days`, see macros/incremental/day_range_filter.sql); older ones are
reported, not re-run (retention may have pruned their rows; a sealed month is corrected with
`kubeledger correct`).

Every path that builds or closes goes through here: `kubeledger build` (cli.py),
`kubeledger close` / `correct` (close/closer.py) and the Dagster ledger asset
(dagster/assets_dbt.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

FINGERPRINT_MODEL = "int_billing_account_days_fingerprinted"
FINGERPRINT_SELECTOR = f"+{FINGERPRINT_MODEL}"
ALLOCATED_DAYS = "ops.allocated_days"
ALLOCATED_FINGERPRINTS = "ops.allocated_billing_fingerprints"

DDL = (
    "create schema if not exists ops",
    f"""
    create table if not exists {ALLOCATED_DAYS} (
        usage_date date primary key,
        allocated_at timestamp not null
    )
    """,
    f"""
    create table if not exists {ALLOCATED_FINGERPRINTS} (
        charge_date date not null,
        provider varchar not null,
        billing_account_id varchar not null,
        billing_line_count bigint not null,
        billing_fingerprint varchar not null,
        allocated_at timestamp not null,
        primary key (charge_date, provider, billing_account_id)
    )
    """,
)


@dataclass
class Reallocation:
    """The changed days of one check: those to allocate again, and those too old to."""

    days: list[dt.date] = field(default_factory=list)
    too_old: list[dt.date] = field(default_factory=list)

    def dbt_vars(self) -> list[str]:
        return [day.isoformat() for day in self.days]

    def describe(self) -> str:
        parts = []
        if self.days:
            parts.append(
                f"re-allocating {len(self.days)} days whose billing lines changed since they "
                f"were allocated: {_spans(self.days)}"
            )
        if self.too_old:
            parts.append(
                f"{len(self.too_old)} days older than the re-run window changed too and keep "
                f"their ledger ({_spans(self.too_old)}; a sealed month: kubeledger correct)"
            )
        return "; ".join(parts)


def _spans(days: list[dt.date]) -> str:
    spans: list[list[dt.date]] = []
    for day in sorted(days):
        if spans and day == spans[-1][1] + dt.timedelta(days=1):
            spans[-1][1] = day
        else:
            spans.append([day, day])
    return ", ".join(
        first.isoformat() if first == last else f"{first}..{last}" for first, last in spans
    )


def ensure_reallocation_schema(con: duckdb.DuckDBPyConnection) -> None:
    for statement in DDL:
        con.execute(statement)


def _fingerprint_relation(con: duckdb.DuckDBPyConnection) -> str | None:
    rows = con.execute(
        "select table_schema from information_schema.tables where table_name = ? "
        "order by table_schema = 'intermediate' desc, table_schema",
        [FINGERPRINT_MODEL],
    ).fetchall()
    return f'"{rows[0][0]}"."{FINGERPRINT_MODEL}"' if rows else None


def changed_days(
    con: duckdb.DuckDBPyConnection, *, as_of: dt.date, max_days_back: int
) -> Reallocation:
    """The allocated days whose current billing fingerprints differ from the stored ones."""
    ensure_reallocation_schema(con)
    relation = _fingerprint_relation(con)
    if relation is None:
        return Reallocation()
    rows = con.execute(
        f"""
        with
        current_prints as (
            select charge_date, provider, billing_account_id, billing_fingerprint
            from {relation}
        ),
        stored as (
            select charge_date, provider, billing_account_id, billing_fingerprint
            from {ALLOCATED_FINGERPRINTS}
        ),
        differing as (
            select coalesce(current_prints.charge_date, stored.charge_date) as usage_date
            from current_prints
            full outer join stored
                on current_prints.charge_date = stored.charge_date
                and current_prints.provider = stored.provider
                and current_prints.billing_account_id = stored.billing_account_id
            where current_prints.billing_fingerprint is distinct from stored.billing_fingerprint
        )
        select distinct differing.usage_date
        from differing
        inner join {ALLOCATED_DAYS} as allocated
            on differing.usage_date = allocated.usage_date
        order by 1
        """
    ).fetchall()
    oldest = as_of - dt.timedelta(days=max_days_back)
    found = Reallocation()
    for (day,) in rows:
        (found.days if day >= oldest else found.too_old).append(day)
    return found


def record_allocation(
    con: duckdb.DuckDBPyConnection,
    *,
    first_day: dt.date | None,
    last_day: dt.date | None,
    extra_days: list[dt.date] = (),
) -> int:
    """Store the current fingerprints of the days just allocated: the range (None: every day
    the ledger or the bill has) and `extra_days`. Returns the number of days recorded."""
    ensure_reallocation_schema(con)
    relation = _fingerprint_relation(con)
    if relation is None:
        return 0
    con.execute("create or replace temp table _allocated (usage_date date)")
    if first_day is None:
        con.execute(f"insert into _allocated select distinct charge_date from {relation}")
        cluster_days = con.execute(
            "select table_schema from information_schema.tables "
            "where table_name = 'int_cluster_costs_daily'"
        ).fetchall()
        if cluster_days:
            con.execute(
                f'insert into _allocated select distinct usage_date from "{cluster_days[0][0]}"'
                ".int_cluster_costs_daily"
            )
    else:
        con.execute(
            "insert into _allocated select cast(range as date) from "
            "range(cast(? as timestamp), cast(? as timestamp) + interval 1 day, interval 1 day)",
            [first_day, last_day or first_day],
        )
    for day in extra_days:
        con.execute("insert into _allocated values (?)", [day])
    con.execute("begin transaction")
    try:
        con.execute(
            f"delete from {ALLOCATED_FINGERPRINTS} where charge_date in "
            "(select usage_date from _allocated)"
        )
        con.execute(
            f"insert into {ALLOCATED_FINGERPRINTS} select charge_date, provider, "
            "billing_account_id, billing_line_count, billing_fingerprint, now() "
            f"from {relation} where charge_date in (select usage_date from _allocated)"
        )
        con.execute(
            f"insert or replace into {ALLOCATED_DAYS} "
            "select distinct usage_date, now() from _allocated where usage_date is not null"
        )
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
    return con.execute("select count(distinct usage_date) from _allocated").fetchone()[0]


RunDbt = Callable[[list[str]], object]


def check_changed_days(
    db_path: Path | str,
    run_dbt: RunDbt,
    *,
    as_of: dt.date,
    max_days_back: int,
) -> Reallocation:
    """Rebuild the fingerprint model from the current billing lines (with `run_dbt`, e.g.
    `lambda args: warehouse.run_dbt(args, db_path=db)`), then return the changed days."""
    with duckdb.connect(str(db_path)) as con:
        ensure_reallocation_schema(con)
        if not con.execute(f"select count(*) from {ALLOCATED_DAYS}").fetchone()[0]:
            return Reallocation()
    run_dbt(["run", "--select", FINGERPRINT_SELECTOR, "--quiet"])
    with duckdb.connect(str(db_path)) as con:
        return changed_days(con, as_of=as_of, max_days_back=max_days_back)
