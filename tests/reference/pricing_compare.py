"""Compare the reference pricing with a warehouse's pricing marts (read-only). The only place
the reference pricing touches a warehouse.

    compare_pricing(pricing, db_path) -> list[str]    # empty: they agree

Keys must match exactly (a missing or extra row is a disagreement); amounts within 1e-6.
Cluster-days the reference has no in-scope line for count as 0 in scope.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from tests.reference.pricing import Pricing

TOLERANCE = 1e-6


def _query(con, sql: str) -> pd.DataFrame:
    frame = con.sql(sql).df()
    if "usage_date" in frame:
        frame["usage_date"] = pd.to_datetime(frame["usage_date"]).dt.date
    return frame


def _diff(name, ref, led, keys, values, texts=()) -> list[str]:
    merged = ref.merge(led, on=keys, how="outer", suffixes=("_ref", "_ledger"), indicator=True)
    out = []
    for fields in merged.to_dict("records"):
        key = ", ".join(f"{k}={fields[k]}" for k in keys)
        if fields["_merge"] != "both":
            side, suffix = (
                ("reference only", "_ref")
                if fields["_merge"] == "left_only"
                else ("ledger only", "_ledger")
            )
            shown = {v: fields[f"{v}{suffix}"] for v in [*values, *texts]}
            out.append(f"{name} [{key}]: {side} {shown}")
            continue
        for value in values:
            a, b = fields[f"{value}_ref"], fields[f"{value}_ledger"]
            if abs(float(a) - float(b)) > TOLERANCE:
                out.append(f"{name} [{key}]: {value} reference {a} ledger {b}")
        for text in texts:
            a, b = fields[f"{text}_ref"], fields[f"{text}_ledger"]
            if a != b:
                out.append(f"{name} [{key}]: {text} reference {a} ledger {b}")
    return out


def compare_pricing(pricing: Pricing, db_path: Path) -> list[str]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        out = _diff(
            "node_days",
            pricing.node_days,
            _query(
                con,
                "select cluster_id, node, usage_date, pricing_basis, hours_run, "
                "node_cost from marts.fct_node_costs_daily",
            ),
            ["cluster_id", "node", "usage_date"],
            ["hours_run", "node_cost"],
            ["pricing_basis"],
        )
        ledger_scope = _query(
            con,
            "select cluster_id, usage_date, billed_cost_in_scope from "
            "marts.fct_cluster_costs_daily",
        )
        ref_scope = (
            pricing.scope.groupby(["cluster_id", "usage_date"], as_index=False)["in_scope_cost"]
            .sum()
            .rename(columns={"in_scope_cost": "billed_cost_in_scope"})
        )
        # A cluster-day the ledger lists with nothing in scope is 0 on the reference side.
        keys = ledger_scope[["cluster_id", "usage_date"]]
        ref_scope = keys.merge(ref_scope, how="outer").fillna({"billed_cost_in_scope": 0.0})
        out += _diff(
            "scope", ref_scope, ledger_scope, ["cluster_id", "usage_date"], ["billed_cost_in_scope"]
        )
        volumes = _query(
            con,
            "select cluster_id, usage_date, pv_name, sum(volume_cost) as volume_cost from "
            "marts.fct_volume_costs_daily group by all",
        )
        ref_volumes = pricing.volume_days.groupby(
            ["cluster_id", "usage_date", "pv_name"], as_index=False
        )["volume_cost"].sum()
        out += _diff(
            "volume_days",
            ref_volumes,
            volumes,
            ["cluster_id", "usage_date", "pv_name"],
            ["volume_cost"],
        )
        lbs = _query(
            con,
            "select cluster_id, usage_date, namespace, service, sum(load_balancer_cost) as "
            "load_balancer_cost from marts.fct_load_balancer_costs_daily group by all",
        )
        out += _diff(
            "lb_days",
            pricing.lb_days.drop(columns="resource_id"),
            lbs,
            ["cluster_id", "usage_date", "namespace", "service"],
            ["load_balancer_cost"],
        )
        unallocated = _query(
            con,
            "select cluster_id, usage_date, resource_id, unallocated_reason as reason, "
            "sum(unallocated_cost) as cost from marts.fct_unallocated_resources_daily "
            "group by all",
        )
        ref_unallocated = pricing.unallocated.groupby(
            ["cluster_id", "usage_date", "resource_id", "reason"], as_index=False
        )["cost"].sum()
        out += _diff(
            "unallocated",
            ref_unallocated,
            unallocated,
            ["cluster_id", "usage_date", "resource_id", "reason"],
            ["cost"],
        )
    finally:
        con.close()
    return out
