"""After a successful build or close: publish the serving copy (serving.py) for readers, and
report what was built to the Dagster instance of `DAGSTER_HOME` (dagster/cli_events.py), so
the UI shows it. Both the CLI and `make demo` call these; Dagster's own runs publish from
their assets and record their own events.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from kubeledger.console import shown
from kubeledger.serving import Published, publish

Echo = Callable[[str], None]


@dataclass
class BuildOutcome:
    """What one `run_build` did: its dbt node results, its quality-gate validations and the
    days it (re)allocated."""

    dbt_results: list[Any] = field(default_factory=list)
    validations: list[Any] = field(default_factory=list)
    days: list[dt.date] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        db: Path,
        dbt_runs: Iterable[Any],
        validations: Sequence[Any],
        start: str | None,
        end: str | None,
        extra_days: Iterable[dt.date] = (),
    ) -> BuildOutcome:
        results = [
            node
            for run in dbt_runs
            for node in (getattr(getattr(run, "result", None), "results", None) or [])
        ]
        if start:
            first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end or start)
            days = {first + dt.timedelta(days=n) for n in range((last - first).days + 1)}
        else:
            days = set(_ledger_days(db))
        days |= set(extra_days)
        return cls(dbt_results=results, validations=list(validations), days=sorted(days))


def _ledger_days(db: Path) -> list[dt.date]:
    """Every day the ledger has a cluster-day for (a build of every day allocates them all)."""
    with duckdb.connect(str(db)) as con:
        exists = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'marts' and table_name = 'fct_reconciliation_daily'"
        ).fetchone()[0]
        if not exists:
            return []
        rows = con.execute(
            "select distinct usage_date from marts.fct_reconciliation_daily order by 1"
        ).fetchall()
    return [row[0] for row in rows]


def after_run(
    db: Path,
    *,
    outcome: BuildOutcome | None = None,
    month: str | None = None,
    command: str,
    echo: Echo,
) -> Published:
    """After a successful build (`outcome`) and/or close (`month`): publish the serving copy;
    when DAGSTER_HOME is set, report the build's partitions and checks and the month's close
    partition (when it is sealed) to that instance."""
    from kubeledger.close.sealed_schema import sealed_bill

    published = publish(db)
    count = 0
    if _dagster_home():
        from kubeledger.dagster.cli_events import build_events, close_event, report

        events: list[Any] = []
        if outcome is not None:
            events += build_events(
                outcome.days, outcome.dbt_results, outcome.validations, command=command
            )
        if month is not None:
            with duckdb.connect(str(db)) as con:
                sealed = sealed_bill(con, month)
            if sealed is not None:
                events.append(close_event(month, sealed, command=command))
        count = report(events)
    line = f"    {published.line()}"
    if count:
        days = f" ({len(outcome.days)} days)" if outcome and outcome.days else ""
        noun = "event" if count == 1 else "events"
        line += f"; reported {count:,} {noun}{days} to Dagster ({shown(Path(_dagster_home()))})"
    echo(line)
    return published


def print_where_to_look(published: Published, report: Path | None, echo: Echo) -> None:
    """The demo's last lines: where each mart, the serving copy and the report are."""
    marts = [name.split(".", 1)[1] for name in published.tables if name.startswith("marts.")]
    sealed = [name.split(".", 1)[1] for name in published.tables if name.startswith("sealed.")]
    serving = shown(published.path)
    echo("==> where to look")
    echo(
        f"    marts         schema marts of the serving copy {serving} ({len(marts)} tables: "
        f"{', '.join(name for name in marts if name.startswith('fct_bill') or name in KEY_MARTS)}"
        ", ...); `duckdb -readonly` it, or point a BI tool at it (README)"
    )
    echo(f"    sealed bills  schema sealed of the same file: {', '.join(sealed[:3])}, ...")
    echo(f"    Parquet       {shown(published.parquet)}/<schema>/<table>.parquet, one per table")
    if report is not None:
        echo(f"    report        {shown(report)}")
    echo("    Dagster UI    make ui (the partitions, checks and close above) · dbt docs: make docs")


KEY_MARTS = ("fct_owner_costs_daily", "fct_pod_costs_daily", "fct_data_health_daily")


def _dagster_home() -> str:
    """Dagster is told only when an instance is configured (importing it takes seconds)."""
    return os.environ.get("DAGSTER_HOME", "").strip()
