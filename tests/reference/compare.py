"""The reference ledger against a built warehouse: the only place the reference reads the marts.

    compare_to_warehouse(ledger, db_path, *, months) -> list[str]   (empty: they agree)

Every node-, pod-, cluster- and owner-day keyed exactly (a missing or extra row is a
disagreement), daily doubles within 1e-6 absolute, text and booleans equal; bill lines of the
given months exactly (Decimal equality). Each table and column reports its count and up to
MAX_EXAMPLES examples, so one systematic difference does not drown the others.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pandas as pd

from tests.reference.ledger import Ledger

TOLERANCE = 1e-6
MAX_EXAMPLES = 5
TABLES = {
    "node_days": (
        "marts.fct_node_costs_daily",
        ["cluster_id", "node", "usage_date"],
        ["pricing_basis"],
        ["hours_run", "node_cost"],
    ),
    "pod_days": (
        "marts.fct_pod_costs_daily",
        ["cluster_id", "usage_date", "namespace", "pod"],
        [
            "workload_kind",
            "workload_name",
            "team",
            "team_source",
            "cost_center",
            "cost_center_source",
            "application",
            "application_source",
            "is_platform",
        ],
        [
            "cpu_cost",
            "memory_cost",
            "gpu_cost",
            "gpu_hours",
            "storage_cost",
            "network_cost",
            "used_cost",
            "workload_idle_cost",
            "total_cost",
        ],
    ),
    "cluster_days": (
        "marts.fct_cluster_costs_daily",
        ["cluster_id", "usage_date"],
        [],
        [
            "billed_cost_in_scope",
            "direct_cost",
            "workload_idle_cost",
            "platform_cost",
            "infrastructure_idle_cost",
            "unattributed_storage_cost",
            "unattributed_network_cost",
            "unallocated_cost",
        ],
    ),
    "owner_days": (
        "marts.fct_owner_costs_daily",
        [
            "cluster_id",
            "usage_date",
            "cost_family",
            "team",
            "cost_center",
            "application",
            "owner_status",
        ],
        [],
        [
            "direct_cost",
            "workload_idle_cost",
            "platform_share_cost",
            "infrastructure_idle_share_cost",
            "workload_idle_share_cost",
            "unattributed_storage_share_cost",
            "unattributed_network_share_cost",
            "unallocated_cost",
            "total_cost",
        ],
    ),
}
BILL_KEY = ["month_start_date", "line_id"]
BILL_EXACT = [
    "cluster_id",
    "cost_family",
    "line_key",
    "is_unassigned",
    "is_reconciled",
    "close_status",
]
BILL_DECIMAL = {"estimated_cost": 6, "billed_cost": 2, "target_cost": 2, "factor": 10}


def _key_text(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return "<null>"
    if isinstance(value, pd.Timestamp):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _keyed(frame: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    frame = frame.copy()
    frame["_key"] = [
        "|".join(_key_text(v) for v in row) for row in frame[key].itertuples(index=False)
    ]
    return frame


def _report(out: list[str], table: str, what: str, examples: list[str], count: int) -> None:
    if count:
        shown = "; ".join(examples[:MAX_EXAMPLES])
        out.append(f"{table}: {what}: {count} rows differ, e.g. {shown}")


def compare_frames(table, ours, theirs, key, exact, doubles) -> list[str]:
    out: list[str] = []
    ours, theirs = _keyed(ours, key), _keyed(theirs, key)
    for name, frame in (("reference", ours), ("warehouse", theirs)):
        duplicated = frame["_key"][frame["_key"].duplicated()]
        _report(out, table, f"duplicate keys in the {name}", list(duplicated), len(duplicated))
    ours = ours.drop_duplicates("_key").set_index("_key")
    theirs = theirs.drop_duplicates("_key").set_index("_key")
    only_ours = sorted(set(ours.index) - set(theirs.index))
    only_theirs = sorted(set(theirs.index) - set(ours.index))
    _report(out, table, f"rows only in the reference (key {key})", only_ours, len(only_ours))
    _report(out, table, f"rows only in the warehouse (key {key})", only_theirs, len(only_theirs))
    common = sorted(set(ours.index) & set(theirs.index))
    for column in exact:
        if column not in theirs or column not in ours:
            out.append(f"{table}: column {column} missing on one side")
            continue
        left = ours.loc[common, column].map(_key_text)
        right = theirs.loc[common, column].map(_key_text)
        bad = left != right
        examples = [f"{k}: ref {left[k]!r} vs wh {right[k]!r}" for k in left.index[bad]]
        _report(out, table, column, examples, int(bad.sum()))
    for column in doubles:
        if column not in theirs or column not in ours:
            out.append(f"{table}: column {column} missing on one side")
            continue
        left = pd.to_numeric(ours.loc[common, column], errors="coerce").astype(float)
        right = pd.to_numeric(theirs.loc[common, column], errors="coerce").astype(float)
        bad = ((left - right).abs() > TOLERANCE) | (left.isna() != right.isna())
        examples = [f"{k}: ref {left[k]:.6f} vs wh {right[k]:.6f}" for k in left.index[bad]]
        _report(out, table, column, examples, int(bad.sum()))
    return out


def _decimal(value, places: int):
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    return Decimal(str(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def compare_to_warehouse(ledger: Ledger, db_path: Path, *, months: list[dt.date]) -> list[str]:
    out: list[str] = []
    with duckdb.connect(str(db_path), read_only=True) as con:
        for name, (mart, key, exact, doubles) in TABLES.items():
            ours = getattr(ledger, name)
            theirs = con.execute(f"select * from {mart}").df()
            if "usage_date" in theirs:
                theirs["usage_date"] = pd.to_datetime(theirs["usage_date"]).dt.date
            out += compare_frames(name, ours, theirs, key, exact, doubles)
        month_list = ", ".join(f"date '{m.isoformat()}'" for m in months)
        # decimals as text, so they arrive exact; the mart's bill_month is the month's first
        # day, the reference's month_start_date
        decimals = ", ".join(f"cast({c} as varchar) as {c}" for c in BILL_DECIMAL)
        theirs = con.execute(
            f"select * exclude ({', '.join(BILL_DECIMAL)}), {decimals}, "
            "bill_month as month_start_date "
            f"from marts.fct_bill_lines_monthly where bill_month in ({month_list})"
        ).df()
    theirs["month_start_date"] = pd.to_datetime(theirs["month_start_date"]).dt.date
    ours = ledger.bill_lines
    ours = ours[ours["month_start_date"].isin(months)] if not ours.empty else ours
    out += compare_frames("bill_lines", ours, theirs, BILL_KEY, BILL_EXACT, [])
    ours_k = _keyed(ours, BILL_KEY).drop_duplicates("_key").set_index("_key")
    theirs_k = _keyed(theirs, BILL_KEY).drop_duplicates("_key").set_index("_key")
    common = sorted(set(ours_k.index) & set(theirs_k.index))
    for column, places in BILL_DECIMAL.items():
        if column not in theirs_k:
            out.append(f"bill_lines: column {column} missing in the warehouse")
            continue
        examples = []
        for k in common:
            left = _decimal(ours_k.at[k, column], places)
            right = _decimal(theirs_k.at[k, column], places)
            if left != right:
                examples.append(f"{k}: ref {left} vs wh {right}")
        _report(out, "bill_lines", column, examples, len(examples))
    return out
