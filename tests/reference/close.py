"""The monthly close (SPEC §9): estimates in decimal, targets, factor, bounds, completeness,
rounding down to the cent with the leftover cents to the largest estimates."""

from __future__ import annotations

import calendar
import datetime as dt
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, localcontext

import pandas as pd

from tests.reference.settings import Settings

UNASSIGNED = "__unassigned__"
FAMILIES = ["compute", "storage", "network"]
CENT = Decimal("0.01")
# SPEC §1: "to the cent" means to the billing currency's minor unit (JPY 0, USD 2, KWD 3). The
# ISO 4217 minor units of the currencies that are not 2:
MINOR_UNITS = {
    "BHD": 3,
    "BIF": 0,
    "CLP": 0,
    "DJF": 0,
    "GNF": 0,
    "IQD": 3,
    "ISK": 0,
    "JOD": 3,
    "JPY": 0,
    "KMF": 0,
    "KRW": 0,
    "KWD": 3,
    "LYD": 3,
    "OMR": 3,
    "PYG": 0,
    "RWF": 0,
    "TND": 3,
    "UGX": 0,
    "UYI": 0,
    "VND": 0,
    "VUV": 0,
    "XAF": 0,
    "XOF": 0,
    "XPF": 0,
}


def unit_of(currency: str | None) -> Decimal:
    return Decimal(1).scaleb(-MINOR_UNITS.get((currency or "USD").upper(), 2))


MICRO = Decimal("0.000001")


PICO = Decimal("0.000000000001")
BILL_PLACES = Decimal("0.0000000001")


def to_micro(value: float | Decimal) -> Decimal:
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    return exact.quantize(MICRO, rounding=ROUND_HALF_UP)


def month_estimate(daily: pd.Series) -> Decimal:
    """A line's estimate (SPEC §9, `decimal(38, 6)`), the tie-break made explicit (README,
    "Rulings"): each daily amount is the decimal it denotes to 12 places (0.03492, not the
    binary double just below it), the days are added exactly, and the sum is rounded half away
    from zero. Thirty days of 0.03492 and one of 0.0327375 are 1.0454175 exactly: 1.045418,
    where a sum of the doubles (1.0454174999999999) would round down."""
    return to_micro(decimal_sum(daily, PICO))


def decimal_sum(values, places: Decimal) -> Decimal:
    """The exact sum of the decimals that doubles denote, each read to `places`."""
    return sum(
        (Decimal(repr(float(v))).quantize(places, rounding=ROUND_HALF_UP) for v in values),
        Decimal(0),
    )


def to_cent(value, cent: Decimal = CENT) -> Decimal:
    return Decimal(repr(float(value)) if isinstance(value, float) else value).quantize(
        cent, rounding=ROUND_HALF_UP
    )


def round_lines(
    estimates: dict[str, Decimal], target: Decimal, cent: Decimal = CENT
) -> dict[str, Decimal]:
    """Each line's exact share = estimate × target / total, rounded down to the cent; the k
    leftover cents go one each to the k largest estimates, ties to the smallest line ID
    (byte-wise). A total of 0 bills nothing (callers route the target to __unassigned__)."""
    total = sum(estimates.values(), Decimal(0))
    if total == 0:
        return {line: Decimal(0).quantize(cent) for line in estimates}
    with localcontext() as context:
        context.prec = 80
        billed = {
            line: (estimate * target / total).quantize(cent, rounding=ROUND_FLOOR)
            for line, estimate in estimates.items()
        }
    leftover = int((target - sum(billed.values(), Decimal(0))) / cent)
    order = sorted(estimates, key=lambda line: (-estimates[line], line.encode()))
    for line in order[:leftover]:
        billed[line] += cent
    return billed


def month_days(month: dt.date) -> list[dt.date]:
    last = calendar.monthrange(month.year, month.month)[1]
    return [month.replace(day=day) for day in range(1, last + 1)]


def close_month(
    month: dt.date,
    owner_days: pd.DataFrame,
    scope: pd.DataFrame,
    day_status: pd.DataFrame,
    settings: Settings,
    as_of: dt.date,
) -> pd.DataFrame:
    """The bill lines of one month, every cluster and family."""
    days = set(month_days(month))
    month_end = max(days)
    closable_from = month_end + dt.timedelta(days=settings.grace_days)
    deadline = month_end + dt.timedelta(days=settings.deadline_days)
    past_deadline = as_of > deadline
    owners = owner_days[owner_days["usage_date"].isin(days)]
    grain = owners[settings.line_grain]
    owners = owners.assign(
        line_key=grain.where(
            (owners["owner_status"] == "owned") & grain.notna() & (grain != "unallocated"),
            UNASSIGNED,
        )
    )
    groups = owners.groupby(["cluster_id", "cost_family", "line_key"])["total_cost"]
    by_slice: dict[tuple, dict] = {}
    for (cluster, family, key), daily in groups:
        by_slice.setdefault((cluster, family), {})[key] = month_estimate(daily)
    scope = scope[scope["usage_date"].isin(days)]
    slices = {key: frame for key, frame in scope.groupby(["cluster_id", "cost_family"])}
    status = day_status[day_status["usage_date"].isin(days)]
    statuses = {key: frame for key, frame in status.groupby("cluster_id")}
    clusters = sorted(set(owners["cluster_id"]) | set(scope["cluster_id"]))
    rows = []
    for cluster in clusters:
        incomplete = _incomplete_days(
            statuses.get(cluster, status.iloc[0:0]),
            settings,
            as_of,
            settings.has_billing_link(cluster),
        )
        for family in FAMILIES:
            estimates = by_slice.get((cluster, family), {})
            slice_rows = slices.get((cluster, family), scope.iloc[0:0])
            if not estimates and slice_rows.empty:
                continue
            rows.extend(
                _cluster_family(
                    cluster,
                    family,
                    estimates,
                    slice_rows,
                    settings,
                    incomplete,
                    past_deadline,
                    as_of >= closable_from,
                )
            )
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame.insert(0, "month_start_date", month)
    return frame


def _incomplete_days(status: pd.DataFrame, settings: Settings, as_of, has_link: bool) -> list:
    """SPEC §4 complete days over the cluster's month (first to last day with evidence).
    SPEC silent on a cluster with no billing link (a rate-card cluster): it has no bill to
    wait for, so its usage days are complete once no node is on an estimate (README: "usage
    and billing present, no node still on an estimate"; the rate card stands for the bill)."""
    evidence = status[status["has_usage"] | status["has_billing"]]
    if evidence.empty:
        return []
    first, last = evidence["usage_date"].min(), evidence["usage_date"].max()
    missing = []
    by_day = {row.usage_date: row for row in status.itertuples(index=False)}
    day = first
    while day <= last:
        row = by_day.get(day)
        usage = bool(row.has_usage) if row is not None else False
        billing = bool(row.has_billing) if row is not None else False
        billing = billing or (usage and not has_link)
        estimated = int(row.estimated_nodes) if row is not None else 0
        # Past the deadline an incomplete day does not block: the cluster falls back to an
        # estimated bill (SPEC §9: days still on estimates at the deadline seal as estimated).
        if usage and billing:
            complete = estimated == 0
        elif not usage and not billing:
            complete = True
        elif billing:
            complete = as_of > day + dt.timedelta(days=settings.repair_window_days)
        else:  # usage without billing: on an estimate
            complete = False
        if not complete:
            missing.append(day)
        day += dt.timedelta(days=1)
    return missing


def _cluster_family(
    cluster, family, estimates, slice_rows, settings, incomplete, past_deadline, closable
):
    total = sum(estimates.values(), Decimal(0))
    has_link = settings.has_billing_link(cluster)
    cluster_config = settings.clusters.get(cluster) or {}
    cent = unit_of(cluster_config.get("currency") or settings.raw.get("currency"))
    # the slice as the exact sum of the amounts its lines bill: a bill writes decimals of at
    # most 10 places, so each day's sum of doubles is read back as the decimal it denotes to
    # 10 places; its sign before rounding (-0.3 yen is a negative slice), then the target
    # rounded half away from zero to the minor unit (a slice of exactly 275.055 bills 275.06,
    # where the binary noise of a sum of doubles can fall either side of the half cent)
    exact_invoice = decimal_sum(slice_rows["in_scope_cost"], BILL_PLACES)
    invoice = to_cent(exact_invoice, cent) if not slice_rows.empty else None
    status, reason, reconciled = "ready", None, True
    if not has_link:
        target, reconciled = to_cent(total, cent), False
    elif invoice is None:
        if total != 0:
            status, reason = "blocked", "empty_slice"
        target, reconciled = to_cent(total, cent), False
    elif exact_invoice < 0:  # a negative invoice slice is treated as no invoice
        target, reconciled = to_cent(total, cent), False
    else:
        target = invoice
        if total > 0 and target > 0:
            factor = target / total
            if not settings.factor_min <= factor <= settings.factor_max:
                status, reason = "blocked", "factor_out_of_bounds"
    if incomplete and status == "ready":
        status, reason = "blocked", "incomplete_days"
    if not closable and status == "ready":
        status, reason = "blocked", "grace_window"
    if status == "blocked" and past_deadline and reason != "grace_window":
        status, reconciled = "estimated_fallback", False
        target = to_cent(total, cent)
    # SPEC §9: lines are per cost center "plus `__unassigned__`": that line always exists.
    lines = {UNASSIGNED: Decimal("0.000000"), **estimates}
    if total == 0 and target != 0:  # nothing attributed: all of it to __unassigned__
        lines_for_rounding = {k: Decimal(1 if k == UNASSIGNED else 0) for k in lines}
    else:
        lines_for_rounding = dict(lines)
    if settings.unassigned_policy == "proportional" and len(lines) > 1:
        # spread over the cost-center lines by estimate before rounding; the line stays,
        # with its own estimate (the ledger cost, SPEC §9) and nothing billed
        rest = sum((v for k, v in lines.items() if k != UNASSIGNED), Decimal(0))
        if rest != 0 and lines[UNASSIGNED] != 0:
            spread = lines[UNASSIGNED]
            with localcontext() as context:
                context.prec = 80
                lines_for_rounding = {
                    k: Decimal(0) if k == UNASSIGNED else v + spread * v / rest
                    for k, v in lines.items()
                }
    billed = round_lines(lines_for_rounding, target, cent)
    allocation = {
        k: v.quantize(MICRO, rounding=ROUND_HALF_UP) for k, v in lines_for_rounding.items()
    }
    if not reconciled:  # no invoice to scale to: the estimate is the bill, factor 1.0
        factor = Decimal(1)
    else:
        factor = (target / total) if total != 0 else (Decimal(0) if target == 0 else None)
    return [
        {
            "cluster_id": cluster,
            "cost_family": family,
            "line_key": key,
            "line_id": f"{cluster}|{family}|{key}",
            "is_unassigned": key == UNASSIGNED,
            "estimated_cost": lines[key],
            "allocation_estimate": allocation[key],
            "billed_cost": billed[key],
            "target_cost": target,
            "factor": factor,
            "is_reconciled": reconciled,
            "close_status": status,
            "reason": reason,
        }
        for key in sorted(lines, key=lambda k: k.encode())
    ]
