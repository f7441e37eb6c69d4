"""The distribution engine (SPEC §7): every pool of shared or idle cost by its rule."""

from __future__ import annotations

import pandas as pd

from tests.reference.ownership import UNOWNED
from tests.reference.settings import PoolRule, Settings

OWNER = ["team", "cost_center", "application", "owner_status"]
SHARE_COLUMN = {
    "platform": "platform_share_cost",
    "infrastructure_idle": "infrastructure_idle_share_cost",
    "workload_idle": "workload_idle_share_cost",
    "unattributed_storage": "unattributed_storage_share_cost",
    "unattributed_network": "unattributed_network_share_cost",
}
BASIS = ["direct", "cpu", "memory", "storage", "network"]
SEPARATE = (UNOWNED, UNOWNED, UNOWNED, "separate")


def platform_owner(settings: Settings) -> tuple[str, str, str, str]:
    # SPEC §7: the platform owner is a named team and cost center; it names no application.
    return (settings.platform_team, settings.platform_cost_center, UNOWNED, "owned")


def _scope_keys(scope: str) -> list[str]:
    return {
        "node": ["cluster_id", "usage_date", "node"],
        "cluster": ["cluster_id", "usage_date"],
        "fleet": ["usage_date"],
    }[scope]


def distribute(
    pools: pd.DataFrame, basis: pd.DataFrame, settings: Settings, platform_basis: pd.DataFrame
) -> pd.DataFrame:
    """pools: cluster_id, usage_date, node (None: not on a node), cost_family, pool, amount.
    basis: cluster_id, usage_date, node, OWNER, direct, cpu, memory, storage, network (one row
    per owner and node; node None for cost not on a node).
    platform_basis: the same columns for platform usage (receivers when include_platform).
    Returns rows: cluster_id, usage_date, cost_family, OWNER, column, amount."""
    out: list[pd.DataFrame] = []
    if pools.empty:
        return _empty()
    # one pass per distinct (rule, pool): clusters sharing a rule are spread together (the
    # scope keys keep them apart, a fleet scope weighs across all of them anyway)
    rules = {c: settings.pool_rules(c) for c in pools["cluster_id"].unique()}
    pools = pools.assign(
        _rule=[rules[c][p] for c, p in zip(pools["cluster_id"], pools["pool"], strict=True)]
    )
    cache: dict = {}
    for (rule, pool), unit in pools.groupby(["_rule", "pool"], sort=False):
        out.append(
            _apply(unit.drop(columns="_rule"), rule, pool, basis, settings, platform_basis, cache)
        )
    result = pd.concat(out, ignore_index=True) if out else _empty()
    return result


def _empty() -> pd.DataFrame:
    columns = ["cluster_id", "usage_date", "cost_family", *OWNER, "column", "amount"]
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _booked(unit: pd.DataFrame, owner: tuple, column: str, factor=1.0) -> pd.DataFrame:
    frame = unit[["cluster_id", "usage_date", "cost_family"]].copy()
    for name, value in zip(OWNER, owner, strict=True):
        frame[name] = value
    frame["column"] = column
    frame["amount"] = unit["amount"].to_numpy() * factor
    return frame


def _apply(unit, rule: PoolRule, pool, basis, settings, platform_basis, cache) -> pd.DataFrame:
    column = SHARE_COLUMN[pool]
    if rule.rule == "keep":
        return _booked(unit, platform_owner(settings), column)
    if rule.rule == "separate":
        return _booked(unit, SEPARATE, column)
    kept = rule.hybrid_share / 100.0
    parts = []
    if kept:
        parts.append(_booked(unit, platform_owner(settings), column, kept))
    rest = unit.assign(amount=unit["amount"] * (1.0 - kept))
    if rule.rule == "fixed":
        for team, cost_center, application, percent in rule.shares:
            owner = (team or UNOWNED, cost_center or UNOWNED, application or UNOWNED, "owned")
            parts.append(_booked(rest, owner, column, percent / 100.0))
        return pd.concat(parts, ignore_index=True)
    receivers = basis
    if rule.include_platform:
        receivers = pd.concat([receivers, platform_basis], ignore_index=True)
    if not rule.include_unowned:
        receivers = receivers[receivers["owner_status"] != "unowned"]
    # node scope for a pool that is on no node (fees, volumes, load balancers): its cluster
    rest = rest.assign(_row=range(len(rest)))
    scopes = [rule.scope] if rule.scope != "node" else ["node", "cluster"]
    pending = rest
    for scope in scopes:
        if scope == "node" and "node" in pending:
            here = pending[pending["node"].notna()]
            pending = pending[pending["node"].isna()]
        else:
            here, pending = pending, pending.iloc[0:0]
        if here.empty:
            continue
        keys = _scope_keys(scope)
        cache_key = (scope, rule.include_platform, rule.include_unowned)
        if cache_key not in cache:
            grouped = receivers.groupby([*keys, *OWNER], as_index=False, dropna=False)[BASIS].sum()
            cache[cache_key] = grouped[grouped["direct"] > 0]
        grouped = cache[cache_key]
        if rule.rule == "even":
            grouped = grouped.assign(weight=1.0)
        else:
            grouped = grouped.assign(weight=grouped[rule.basis].clip(lower=0.0))
            grouped = grouped[grouped["weight"] > 0]
        grouped["total"] = grouped.groupby(keys)["weight"].transform("sum")
        joined = here.merge(grouped[[*keys, *OWNER, "weight", "total"]], on=keys, how="left")
        hit = joined["total"].notna() & (joined["total"] > 0)
        shares = joined[hit]
        if not shares.empty:
            frame = shares[["cluster_id", "usage_date", "cost_family", *OWNER]].copy()
            frame["column"] = column
            frame["amount"] = shares["amount"] * shares["weight"] / shares["total"]
            parts.append(frame)
        # A pool whose basis is 0 (nobody can receive it) becomes a separate line.
        missed = here[~here["_row"].isin(shares["_row"])]
        if not missed.empty:
            parts.append(_booked(missed, SEPARATE, column))
    return pd.concat(parts, ignore_index=True) if parts else _empty()
