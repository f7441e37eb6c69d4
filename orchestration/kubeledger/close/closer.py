"""The monthly close (SPEC §9): grace window, completeness, blocked slices, then the seal.

`close_month` builds the close models for one month with dbt (vars `close_month`, `as_of`),
reads the month's slices from int_bill_targets_monthly and refuses, with a reason a person
can act on, when
- the grace window has not passed (as of < month end + grace_days): it names the first date
  the month may close;
- before the deadline (month end + deadline_days), a cluster has a day not complete in
  fct_reconciliation_daily: it names the cluster and the days;
- before the deadline, a slice is blocked (`empty_slice`, `factor_out_of_bounds`): it lists
  the close-status rows.
From the deadline on, blocked slices and incomplete days are sealed on their fallback (the
estimate; the invoice plus the estimate of the missing days) and the month seals `partial`.
Otherwise the month is sealed by `seal.seal_month` in one transaction; a month sealed before
is refused by the database's primary key.

Before anything is built or read, every day whose billing lines changed since it was allocated
(a restated export loaded after the last build) is allocated again (SPEC §9,
kubeledger/reallocation.py), so the ledger and the invoice slice rest on the same lines.

`correct_month` recomputes a sealed month now and seals the per-line delta against the bill
(as sealed plus earlier corrections) as a numbered correction, when anything changed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from kubeledger.close.relations import find_relation
from kubeledger.close.seal import (
    AlreadySealedError,
    CorrectionBill,
    SealedBill,
    SealError,
    SealSources,
    already_sealed_message,
    seal_correction,
    seal_month,
    sealed_bill,
)
from kubeledger.paths import PROFILES_DIR, PROJECT_DIR

MONTH_RE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")
CLOSE_SELECTOR = "tag:close"
# Where dbt puts the models this package reads, most likely first (see generate_schema_name).


class CloseError(RuntimeError):
    """The close (or correction) was refused or failed; `rows` are the slices behind it."""

    def __init__(self, message: str, rows: list[dict] | None = None) -> None:
        super().__init__(message)
        self.rows = rows or []


@dataclass
class DbtProject:
    """Where the dbt project is and where its run artifacts go."""

    project_dir: Path = field(
        default_factory=lambda: Path(os.environ.get("DBT_PROJECT_DIR") or PROJECT_DIR)
    )
    profiles_dir: Path = field(
        default_factory=lambda: Path(os.environ.get("DBT_PROFILES_DIR") or PROFILES_DIR)
    )
    target_path: Path | None = None
    log_path: Path | None = None


@dataclass
class CloseResult:
    month: str
    as_of: dt.date
    bill: SealedBill
    slices: list[dict]


@dataclass
class CorrectionResult:
    month: str
    as_of: dt.date
    correction: CorrectionBill | None
    slices: list[dict]


def parse_month(text: str) -> str:
    """Validate a `YYYY-MM` month; raise CloseError otherwise."""
    month = str(text).strip()
    if not MONTH_RE.match(month):
        raise CloseError(f"--month must be YYYY-MM (e.g. 2026-10), got {text!r}")
    return month


def month_bounds(month: str) -> tuple[dt.date, dt.date]:
    """The first and the last day of a `YYYY-MM` month."""
    year, number = (int(part) for part in parse_month(month).split("-"))
    first = dt.date(year, number, 1)
    following = dt.date(year + (number == 12), number % 12 + 1, 1)
    return first, following - dt.timedelta(days=1)


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def close_month(
    db_path: Path | str,
    month: str,
    as_of: dt.date | None = None,
    *,
    project: DbtProject | None = None,
    project_dir: Path | str | None = None,
    run_dbt: bool = True,
    upstream: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CloseResult:
    """Close and seal one month of the warehouse at `db_path`, as of `as_of` (default today).

    Raises CloseError when the month may not close yet (with the slices behind it),
    AlreadySealedError when it is sealed already, UnbalancedBillError when a bill would not
    balance (nothing is written). `upstream=True` also re-runs the models the close depends
    on for the month's days (vars start_date / end_date) before closing.
    """
    month = parse_month(month)
    as_of = as_of or utc_today()
    project = _project(project, project_dir)
    if run_dbt:
        reallocate_changed_days(db_path, as_of, project=project, progress=progress)
        build_close_models(
            db_path, month, as_of, project=project, upstream=upstream, progress=progress
        )
    with _connect(db_path) as con:
        slices = read_slices(con, month)
        try:
            check_closable(month, as_of, slices)
        except CloseError as refusal:
            existing = sealed_bill(con, month)
            if existing is not None:
                raise AlreadySealedError(already_sealed_message(existing)) from refusal
            raise
        bill = seal_month(con, month, close_sources(con), as_of=as_of)
    return CloseResult(month=month, as_of=as_of, bill=bill, slices=slices)


def correct_month(
    db_path: Path | str,
    month: str,
    as_of: dt.date | None = None,
    *,
    project: DbtProject | None = None,
    project_dir: Path | str | None = None,
    run_dbt: bool = True,
    upstream: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CorrectionResult:
    """Recompute a sealed month now and seal the delta as a correction when a line changed."""
    month = parse_month(month)
    as_of = as_of or utc_today()
    project = _project(project, project_dir)
    with _connect(db_path) as con:
        if sealed_bill(con, month) is None:
            raise CloseError(
                f"month {month} is not sealed, so there is nothing to correct; "
                f"close it: kubeledger close --month {month}"
            )
    if run_dbt:
        reallocate_changed_days(db_path, as_of, project=project, progress=progress)
        build_close_models(
            db_path, month, as_of, project=project, upstream=upstream, progress=progress
        )
    with _connect(db_path) as con:
        slices = read_slices(con, month)
        if not slices:
            raise CloseError(f"month {month} has no slices in the warehouse now; is it built?")
        if slices[0]["as_of_date"] != as_of:
            raise CloseError(
                f"the close models of {month} were built as of {slices[0]['as_of_date']}, "
                f"not {as_of:%Y-%m-%d}; build them as of the correction date (run_dbt=True)"
            )
        if not slices[0]["is_past_deadline"]:
            _refuse_missing_days(month, slices, action="correct")
            _refuse_blocked(month, slices, action="correct")
        correction = seal_correction(con, month, close_sources(con), as_of=as_of)
    return CorrectionResult(month=month, as_of=as_of, correction=correction, slices=slices)


def check_closable(month: str, as_of: dt.date, slices: list[dict]) -> None:
    """Refuse (CloseError) unless the month may be sealed as of `as_of`."""
    if not slices:
        raise CloseError(
            f"month {month} has nothing to bill: no cluster has ledger cost or billing lines "
            "in it (is the warehouse loaded and built for that month?)"
        )
    first = slices[0]
    closable_from = first["closable_from_date"]
    if as_of < closable_from:
        grace = (closable_from - first["month_end_date"]).days
        raise CloseError(
            f"month {month} cannot close before {closable_from:%Y-%m-%d}: the grace window "
            f"is {grace} days after the month's end ({first['month_end_date']:%Y-%m-%d}) so "
            f"billing restatements settle; as of {as_of:%Y-%m-%d}. Retry on or after "
            f"{closable_from:%Y-%m-%d}."
        )
    if first["as_of_date"] != as_of:
        raise CloseError(
            f"the close models of {month} were built as of {first['as_of_date']}, not "
            f"{as_of:%Y-%m-%d}; build them as of the close date (run_dbt=True)"
        )
    if first["is_past_deadline"]:
        return
    _refuse_missing_days(month, slices, action="close")
    _refuse_blocked(month, slices, action="close")


def _refuse_missing_days(month: str, slices: list[dict], *, action: str) -> None:
    per_cluster: dict[str, dict] = {}
    for row in slices:
        if row["days_missing"] and row["cluster_id"] not in per_cluster:
            per_cluster[row["cluster_id"]] = row
    if not per_cluster:
        return
    deadline = slices[0]["deadline_date"]
    parts = []
    for cluster, row in sorted(per_cluster.items()):
        days = (row["missing_dates"] or str(row["first_missing_date"])).split(", ")
        shown = ", ".join(days[:5]) + (f" and {len(days) - 5} more" if len(days) > 5 else "")
        parts.append(f"cluster {cluster}: {shown}")
    raise CloseError(
        f"month {month} cannot {action}: days not complete in the ledger (usage or billing "
        f"missing, or still on estimates) - {'; '.join(parts)}. Load the missing data and "
        f"rebuild those days; from the deadline {deadline:%Y-%m-%d} on they seal as estimated.",
        rows=[row for row in slices if row["days_missing"]],
    )


def _refuse_blocked(month: str, slices: list[dict], *, action: str) -> None:
    blocked = [row for row in slices if row["close_status"] == "blocked"]
    if not blocked:
        return
    deadline = slices[0]["deadline_date"]
    parts = []
    for row in blocked:
        text = f"{row['cluster_id']} {row['cost_family']}: {row['reason']}"
        if row["reason"] == "factor_out_of_bounds":
            text += (
                f" (factor {row['invoice_factor']:.4f} outside "
                f"[{float(row['factor_min']):g}, {float(row['factor_max']):g}]: invoice "
                f"{row['invoice_cost']} over estimate {row['estimated_cost']:.2f})"
            )
        elif row["reason"] == "empty_slice":
            text += (
                f" (the billing link selects no billing line; estimate {row['estimated_cost']:.2f})"
            )
        parts.append(text)
    raise CloseError(
        f"month {month} cannot {action}: blocked - {'; '.join(parts)}. Fix the billing link "
        f"and retry (the close is retried daily); from the deadline {deadline:%Y-%m-%d} on "
        "these slices fall back to their estimate and the month seals partial.",
        rows=blocked,
    )


def build_close_models(
    db_path: Path | str,
    month: str,
    as_of: dt.date,
    *,
    project: DbtProject | None = None,
    upstream: bool = False,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Build (and test) the close models for one month with dbt, in-process."""
    from kubeledger.dbt_invoke import invoke_dbt

    project = project or DbtProject()
    first, last = month_bounds(month)
    dbt_vars: dict[str, Any] = {"close_month": month, "as_of": as_of.isoformat()}
    selector = CLOSE_SELECTOR
    if upstream:
        selector = "+" + CLOSE_SELECTOR
        dbt_vars.update(start_date=first.isoformat(), end_date=last.isoformat())
    from kubeledger.dbt_vars import DbtVarError, check_dbt_vars

    try:
        check_dbt_vars(dbt_vars)
    except DbtVarError as exc:
        raise CloseError(str(exc)) from exc
    args = [
        "build",
        "--select",
        selector,
        "--exclude-resource-type",
        "unit_test",
        "--vars",
        json.dumps(dbt_vars),
        "--project-dir",
        str(project.project_dir),
        "--profiles-dir",
        str(project.profiles_dir),
    ]
    if project.target_path is not None:
        args += ["--target-path", str(project.target_path)]
    if project.log_path is not None:
        args += ["--log-path", str(project.log_path)]
    if progress is None:
        args.append("--quiet")

    def _callback(event: Any) -> None:
        if progress is not None and event.info.name in ("LogModelResult", "LogTestResult"):
            progress(event.info.msg)

    with _env(KUBELEDGER_DB=str(db_path)):
        try:
            result = invoke_dbt(args, callbacks=[_callback], label=f"dbt build close {month}")
        finally:
            release_dbt_connection()
    if result.exception is not None:
        from kubeledger.contention import busy_message

        text = f"dbt could not build the close models of {month}: {result.exception}"
        raise CloseError(busy_message(text) or text)
    if not result.success:
        failures = [
            f"{node_result.node.name}: {node_result.message}"
            for node_result in getattr(result.result, "results", None) or []
            if str(node_result.status) in ("error", "fail", "runtime error")
        ]
        raise CloseError(
            f"dbt could not build the close models of {month}; nothing was sealed:\n  "
            + "\n  ".join(failures or ["see the dbt log"])
        )


def _invoke_dbt(db_path: Path | str, project: DbtProject, args: list[str], *, what: str) -> None:
    """One in-process dbt command on `project`; raise CloseError naming `what` on failure."""
    from kubeledger.dbt_invoke import invoke_dbt

    command = [
        *args,
        "--project-dir",
        str(project.project_dir),
        "--profiles-dir",
        str(project.profiles_dir),
    ]
    if project.target_path is not None:
        command += ["--target-path", str(project.target_path)]
    if project.log_path is not None:
        command += ["--log-path", str(project.log_path)]
    with _env(KUBELEDGER_DB=str(db_path)):
        try:
            result = invoke_dbt(command)
        finally:
            release_dbt_connection()
    if result.exception is not None:
        raise CloseError(f"dbt could not {what}: {result.exception}")
    if not result.success:
        failures = [
            f"{node_result.node.name}: {node_result.message}"
            for node_result in getattr(result.result, "results", None) or []
            if str(node_result.status) in ("error", "fail", "runtime error")
        ]
        raise CloseError(
            f"dbt could not {what}; nothing was sealed:\n  "
            + "\n  ".join(failures or ["see the dbt log"])
        )


def _rerun_max_days_back(db_path: Path | str) -> int:
    with _connect(db_path) as con:
        relation = find_relation(con, "stg_config__settings")
        if relation is None:
            return 92
        row = con.execute(f"select max(rerun_max_days_back) from {relation}").fetchone()
    return int(row[0]) if row and row[0] is not None else 92


def reallocate_changed_days(
    db_path: Path | str,
    as_of: dt.date,
    *,
    project: DbtProject | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dt.date]:
    """Allocate again every day whose billing lines changed since it was allocated (inside
    the re-run window as of `as_of`), with the whole project; return those days."""
    from kubeledger import reallocation

    project = project or DbtProject()
    changed = reallocation.check_changed_days(
        db_path,
        lambda args: _invoke_dbt(
            db_path, project, args, what="fingerprint the current billing lines"
        ),
        as_of=as_of,
        max_days_back=_rerun_max_days_back(db_path),
    )
    if progress is not None and (changed.days or changed.too_old):
        progress(changed.describe())
    if not changed.days:
        return []
    first = changed.days[0]
    dbt_vars = {
        "start_date": first.isoformat(),
        "end_date": first.isoformat(),
        "reallocate_days": changed.dbt_vars(),
        "as_of": as_of.isoformat(),
    }
    args = ["build", "--exclude-resource-type", "unit_test", "--vars", json.dumps(dbt_vars)]
    if progress is None:
        args.append("--quiet")
    _invoke_dbt(db_path, project, args, what="re-allocate the days whose billing lines changed")
    with _connect(db_path) as con:
        reallocation.record_allocation(
            con, first_day=first, last_day=first, extra_days=changed.days
        )
    return changed.days


def release_dbt_connection() -> None:
    """Close the DuckDB database dbt-duckdb keeps open in-process after a run, so this process
    can open the file again in any mode (and the next writer can open it at all)."""
    from kubeledger.warehouse import _release_duckdb

    _release_duckdb()


def read_slices(con: duckdb.DuckDBPyConnection, month: str) -> list[dict]:
    """The month's rows of int_bill_targets_monthly (one per cluster and cost family)."""
    relation = find_relation(con, "int_bill_targets_monthly")
    if relation is None:
        return []
    cursor = con.execute(
        f"select * from {relation} where bill_month = ? "
        "order by encode(cluster_id), encode(cost_family)",
        [month],
    )
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def close_sources(con: duckdb.DuckDBPyConnection) -> SealSources:
    lines = find_relation(con, "int_bill_lines_allocated")
    slices = find_relation(con, "int_bill_targets_monthly")
    if lines is None or slices is None:
        raise SealError("the close models are not in the warehouse; build them first")
    return SealSources(
        lines=lines,
        slices=slices,
        billing_lines=find_relation(con, "int_billing_lines_scoped"),
    )


def _project(project: DbtProject | None, project_dir: Path | str | None) -> DbtProject:
    project = project or DbtProject()
    if project_dir is not None:
        project.project_dir = Path(project_dir)
    return project


@contextmanager
def _connect(db_path: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(str(db_path))
    try:
        yield con
    finally:
        con.close()


@contextmanager
def _env(**values: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
