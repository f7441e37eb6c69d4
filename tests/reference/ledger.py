"""The reference ledger: pricing (refprice's part) → hourly allocation → ownership →
distribution → close, over the landing files and kubeledger.yml only."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from tests.reference.allocation import allocate_pod_hours, node_roles
from tests.reference.close import close_month
from tests.reference.distribution import OWNER, distribute, platform_owner
from tests.reference.labels import KeyRule
from tests.reference.ownership import resolve_owners, workloads
from tests.reference.pricing import price_fleet
from tests.reference.settings import Settings
from tests.reference.usage import Usage, read_usage

POD_KEY = ["cluster_id", "usage_date", "namespace", "pod"]
GIB = 1024.0**3


@dataclass
class Ledger:
    node_days: pd.DataFrame
    pod_days: pd.DataFrame
    cluster_days: pd.DataFrame
    owner_days: pd.DataFrame
    bill_lines: pd.DataFrame
    namespace_days: pd.DataFrame | None = None  # namespace-level cost rows (pod None)


def reference_ledger(
    landing: Path,
    config_path: Path,
    *,
    as_of: dt.date,
    deliveries: list[Path] | None = None,
) -> Ledger:
    """`deliveries`: folders loaded after `landing`, in load order (e.g. each `late/<day>/`
    in day order); replacement of billing periods and usage hours then follows that order
    (docs/landing-and-raw.md), not file times or manifest dates."""
    config = yaml.safe_load(Path(config_path).read_text()) if Path(config_path).exists() else {}
    config = config or {}
    usage = read_usage(Path(landing), deliveries)
    pricing = price_fleet(Path(landing), config, as_of=as_of, deliveries=deliveries, usage=usage)
    return build_ledger(usage, pricing, config, as_of=as_of)


def build_ledger(usage: Usage, pricing, config: dict, *, as_of: dt.date) -> Ledger:
    settings = Settings.from_config(config)
    rule = KeyRule.from_config(config)
    pods = usage.pods.copy()
    pods["role"] = node_roles(pods, usage.node_labels)
    pod_hours, node_hours = allocate_pod_hours(
        pods,
        pricing.node_days,
        settings,
        gpus=usage.gpus,
        node_labels=usage.node_labels,
        config=config,
    )
    pod_nodes = _pod_node_days(pod_hours)

    pod_days, namespace_days, unattributed = _pod_and_namespace_days(
        pod_hours, pod_nodes, usage, pricing, settings
    )
    owned = pd.concat([pod_days, namespace_days], ignore_index=True)
    owned["pod"] = owned["pod"].astype(object).where(owned["pod"].notna(), None)
    for column in ("storage_platform", "is_platform"):
        owned[column] = owned[column].fillna(False).astype(bool)
    owned = resolve_owners(owned, usage.namespace_labels, settings, rule)
    owns = (owned["team"] != "unallocated") | (owned["cost_center"] != "unallocated")
    owned["owner_status"] = np.where(owns.to_numpy(), "owned", "unowned").astype(object)
    owned["gpu_cost"] = owned["gpu_cost"].fillna(0.0)
    owned["gpu_hours"] = owned["gpu_seconds"].fillna(0.0) / 3600.0
    owned["total_cost"] = (
        owned["cpu_cost"]
        + owned["memory_cost"]
        + owned["gpu_cost"]
        + owned["storage_cost"]
        + owned["network_cost"]
    )
    # Lead's ruling (3a), SPEC §5 "Direct = the used cost of user pods plus the cost of their
    # volumes and load balancers": the pod mart's used_cost is the pod's direct cost, CPU and
    # memory used plus its storage and network cost, so used_cost + workload_idle_cost =
    # total_cost.
    owned["used_cost"] = owned["used_cost"] + owned["storage_cost"] + owned["network_cost"]
    cluster_days = _cluster_days(owned, unattributed, node_hours, pricing)
    owner_days = _owner_days(owned, unattributed, node_hours, pod_nodes, pricing, settings)
    months = sorted({d.replace(day=1) for d in owner_days["usage_date"]})
    scope = pricing.scope.assign(usage_date=lambda f: pd.to_datetime(f["usage_date"]).dt.date)
    status = pricing.day_status.assign(usage_date=lambda f: pd.to_datetime(f["usage_date"]).dt.date)
    bills = [close_month(m, owner_days, scope, status, settings, as_of) for m in months]
    bills = [b for b in bills if not b.empty]
    bill_lines = pd.concat(bills, ignore_index=True) if bills else pd.DataFrame()
    # SPEC silent on where namespace-level cost (a volume no pod mounted, a load balancer)
    # appears in the pod mart; README's fct_pod_costs_daily is "a pod-day", so those rows are
    # kept apart in Ledger.namespace_days (pod None) and counted in cluster and owner days.
    is_pod = owned["pod"].notna()
    return Ledger(
        node_days=pricing.node_days.copy(),
        pod_days=owned[is_pod].sort_values(POD_KEY).reset_index(drop=True),
        namespace_days=owned[~is_pod].sort_values(POD_KEY[:3]).reset_index(drop=True),
        cluster_days=cluster_days,
        owner_days=owner_days,
        bill_lines=bill_lines,
    )


SUMS = [
    "cpu_cost",
    "memory_cost",
    "gpu_cost",
    "gpu_seconds",
    "cpu_used",
    "memory_used",
    "used_cost",
    "workload_idle_cost",
    "compute_cost",
    "pod_hours",
    "cpu_usage_core_hours",
    "cpu_request_core_hours",
    "memory_usage_gib_hours",
    "memory_request_gib_hours",
    "overcommitted_hours",
]


def _pod_node_days(pod_hours: pd.DataFrame) -> pd.DataFrame:
    """Pod-hours summed per pod, day, node and whether the hours were platform hours."""
    frame = pod_hours.assign(
        pod_hours=1.0,
        cpu_usage_core_hours=pod_hours["pod_usage_cpu_core_seconds"] / 3600.0,
        cpu_request_core_hours=pod_hours["pod_request_cpu_core_seconds"] / 3600.0,
        memory_usage_gib_hours=pod_hours["pod_usage_memory_byte_seconds"] / 3600.0 / GIB,
        memory_request_gib_hours=pod_hours["pod_request_memory_byte_seconds"] / 3600.0 / GIB,
        overcommitted_hours=pod_hours["is_overcommitted"].astype(int),
    )
    return frame.groupby([*POD_KEY, "node", "is_platform_hour"], as_index=False, sort=False)[
        SUMS
    ].sum()


def _pod_and_namespace_days(pod_hours, pod_nodes, usage, pricing, settings):
    platform = pod_nodes["is_platform_hour"]
    frame = pod_nodes.assign(
        direct_hour=pod_nodes["used_cost"].where(~platform, 0.0),
        idle_hour=pod_nodes["workload_idle_cost"].where(~platform, 0.0),
        platform_hour=pod_nodes["compute_cost"].where(platform, 0.0),
        platform_hours=pod_nodes["pod_hours"].where(platform, 0.0),
    )
    sums = [*SUMS, "direct_hour", "idle_hour", "platform_hour", "platform_hours"]
    pod_days = frame.groupby(POD_KEY, as_index=False)[sums].sum()
    # A pod's labels for a day are those of its last hour that day (SPEC §6); its node too.
    # (ties, a pod on two nodes in its last hour: the node that sorts last)
    group = pod_hours.groupby(POD_KEY, sort=False).ngroup().to_numpy()
    hour = pod_hours["hour"].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().astype("int64")
    order = np.lexsort((pod_hours["node"].astype(str).to_numpy(), hour, group))
    is_last = np.ones(len(order), dtype=bool)
    is_last[:-1] = group[order][1:] != group[order][:-1]
    last = pod_hours.iloc[order[is_last]][[*POD_KEY, "pod_labels", "node"]]
    pod_days = pod_days.merge(last, on=POD_KEY, how="left")
    # SPEC silent on is_platform for a pod platform only some hours of a day: true when every
    # hour of its day was platform (its cost columns are split per hour either way).
    pod_days["is_platform"] = pod_days["platform_hours"] == pod_days["pod_hours"]
    pod_days = pod_days.merge(
        workloads(pod_days, usage.owners), on=["cluster_id", "namespace", "pod"], how="left"
    )

    storage = _volume_split(usage, pricing)
    on_pods = storage[storage["pod"].notna()]
    per_pod = on_pods.groupby(POD_KEY, as_index=False)["storage_cost"].sum()
    pod_days = pod_days.merge(per_pod, on=POD_KEY, how="left")
    pod_days["storage_cost"] = pod_days["storage_cost"].fillna(0.0)
    orphan = on_pods.merge(pod_days[POD_KEY], on=POD_KEY, how="left", indicator=True)
    orphan = orphan[orphan["_merge"] == "left_only"].drop(columns="_merge")
    pod_days["network_cost"] = 0.0

    # Namespace-level rows: volumes mounted by no pod that day, pods with storage but no
    # pod-hours, and load balancers (a Service's namespace).
    unattributed = storage[storage["namespace"].isna()]
    ns_storage = pd.concat(
        [storage[storage["pod"].isna() & storage["namespace"].notna()], orphan],
        ignore_index=True,
    )
    ns_storage = ns_storage.assign(pod=ns_storage["pod"].astype(object))
    ns_storage = ns_storage.groupby(
        ["cluster_id", "usage_date", "namespace", "pod"], as_index=False, dropna=False
    )["storage_cost"].sum()
    lbs = pricing.lb_days.copy()
    lbs["usage_date"] = pd.to_datetime(lbs["usage_date"]).dt.date
    lbs = lbs.groupby(["cluster_id", "usage_date", "namespace"], as_index=False)[
        "load_balancer_cost"
    ].sum()
    lbs = lbs.rename(columns={"load_balancer_cost": "network_cost"}).assign(pod=None)
    namespace_days = pd.concat([ns_storage, lbs], ignore_index=True)
    namespace_days = namespace_days.groupby(POD_KEY, as_index=False, dropna=False)[
        ["storage_cost", "network_cost"]
    ].sum()
    namespace_days[["storage_cost", "network_cost"]] = namespace_days[
        ["storage_cost", "network_cost"]
    ].fillna(0.0)
    for column in sums:
        namespace_days[column] = 0.0
    namespace_days["pod_labels"] = ""
    namespace_days["workload_kind"] = None
    namespace_days["workload_name"] = None
    namespace_days["node"] = None
    platform_ns = _platform_namespaces(namespace_days["namespace"], settings)
    namespace_days["is_platform"] = platform_ns
    pod_days["storage_platform"] = _platform_namespaces(pod_days["namespace"], settings)
    namespace_days["storage_platform"] = platform_ns
    return pod_days, namespace_days, unattributed


def _platform_namespaces(namespaces: pd.Series, settings) -> pd.Series:
    lookup = {ns: settings.is_platform_namespace(ns) for ns in namespaces.dropna().unique()}
    return namespaces.map(lookup).fillna(False).astype(bool)


def _volume_split(usage: Usage, pricing) -> pd.DataFrame:
    """A volume-day's cost to the pods that mounted it, by hours (SPEC §4); to its PVC's
    namespace when no pod mounted it; unattributed (namespace None) when nothing claimed it."""
    volumes = pricing.volume_days.copy()
    columns = ["cluster_id", "usage_date", "namespace", "pod", "pv_name", "storage_cost"]
    if volumes.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns}).assign(
            storage_cost=pd.Series(dtype=float)
        )
    volumes["usage_date"] = pd.to_datetime(volumes["usage_date"]).dt.date
    volumes = volumes.groupby(["cluster_id", "usage_date", "pv_name"], as_index=False)[
        "volume_cost"
    ].sum()
    storage = usage.storage
    claimed = storage[storage["persistentvolumeclaim"] != ""]
    mounts = (
        claimed[claimed["pod"] != ""]
        .groupby(
            ["cluster_id", "usage_date", "persistentvolume", "namespace", "pod"], as_index=False
        )
        .agg(hours=("hour", "nunique"))
    )
    claims = claimed.sort_values("hour").drop_duplicates(
        ["cluster_id", "usage_date", "persistentvolume"], keep="last"
    )[["cluster_id", "usage_date", "persistentvolume", "namespace"]]
    keys = ["cluster_id", "usage_date", "pv_name"]
    mounts = mounts.rename(columns={"persistentvolume": "pv_name"})
    claims = claims.rename(columns={"persistentvolume": "pv_name"})
    mounted = volumes.merge(mounts, on=keys, how="inner")
    mounted["storage_cost"] = (
        mounted["volume_cost"] * mounted["hours"] / mounted.groupby(keys)["hours"].transform("sum")
    )
    rest = volumes.merge(mounts[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    rest = rest[rest["_merge"] == "left_only"].drop(columns="_merge")
    rest = rest.merge(claims, on=keys, how="left").assign(pod=None)
    rest["storage_cost"] = rest["volume_cost"]
    out = pd.concat([mounted[columns], rest[columns]], ignore_index=True)
    out["pod"] = out["pod"].astype(object).where(out["pod"].notna(), None)
    return out


def _cluster_days(owned, unattributed, node_hours, pricing) -> pd.DataFrame:
    keys = ["cluster_id", "usage_date"]
    attributed = owned
    user = ~attributed["storage_platform"]
    frame = attributed.assign(
        direct=attributed["direct_hour"]
        + (attributed["storage_cost"] + attributed["network_cost"]).where(user, 0.0),
        platform=attributed["platform_hour"]
        + (attributed["storage_cost"] + attributed["network_cost"]).where(~user, 0.0),
    )
    days = frame.groupby(keys, as_index=False).agg(
        direct_cost=("direct", "sum"),
        workload_idle_cost=("idle_hour", "sum"),
        platform_cost=("platform", "sum"),
    )
    node = (
        node_hours.assign(
            infra=node_hours["remainder"].where(~node_hours["is_platform_node"], 0.0),
            platform_node=node_hours["remainder"].where(node_hours["is_platform_node"], 0.0),
            over=node_hours["is_overcommitted"].fillna(False).astype(int),
        )
        .groupby(keys, as_index=False)
        .agg(
            infrastructure_idle_cost=("infra", "sum"),
            platform_node_cost=("platform_node", "sum"),
            overcommitted_node_hours=("over", "sum"),
        )
    )
    parts = [days, node]
    fees = _by_day(pricing.platform_fees, "cost", "platform_fee_cost")
    unattributed = _by_day(unattributed, "storage_cost", "unattributed_storage_cost")
    network = _by_day(pricing.network_pool, "cost", "unattributed_network_cost")
    unallocated = _by_day(pricing.unallocated, "cost", "unallocated_cost")
    scope = _by_day(pricing.scope, "in_scope_cost", "billed_cost_in_scope")
    node_cost = _by_day(pricing.node_days, "node_cost", "node_cost")
    out = scope
    for part in [*parts, fees, unattributed, network, unallocated, node_cost]:
        out = out.merge(part, on=keys, how="outer")
    out = out.fillna(0.0)
    out["platform_cost"] = (
        out["platform_cost"] + out["platform_node_cost"] + out["platform_fee_cost"]
    )
    out["ledger_cost"] = out[
        [
            "direct_cost",
            "workload_idle_cost",
            "platform_cost",
            "infrastructure_idle_cost",
            "unattributed_storage_cost",
            "unattributed_network_cost",
            "unallocated_cost",
        ]
    ].sum(axis=1)
    return (
        out.drop(columns=["platform_node_cost", "platform_fee_cost"])
        .sort_values(keys)
        .reset_index(drop=True)
    )


def _by_day(frame: pd.DataFrame, column: str, name: str) -> pd.DataFrame:
    keys = ["cluster_id", "usage_date"]
    if frame.empty:
        return pd.DataFrame({"cluster_id": pd.Series(dtype=str), "usage_date": [], name: []})
    frame = frame.assign(usage_date=pd.to_datetime(frame["usage_date"]).dt.date)
    return frame.groupby(keys, as_index=False)[column].sum().rename(columns={column: name})


def _owner_days(owned, unattributed, node_hours, pod_nodes, pricing, settings) -> pd.DataFrame:
    """fct_owner_costs_daily: direct and workload idle per owner, every pool's shares."""
    base = ["cluster_id", "usage_date"]
    attributed = owned.copy()
    user = ~attributed["storage_platform"]
    rows = []

    def book(frame, family, column, amount):
        part = frame[[*base, *OWNER]].copy()
        part["cost_family"] = family
        part["column"] = column
        part["amount"] = amount.to_numpy()
        rows.append(part)

    book(attributed, "compute", "direct_cost", attributed["direct_hour"])
    book(attributed, "storage", "direct_cost", attributed["storage_cost"].where(user, 0.0))
    book(attributed, "network", "direct_cost", attributed["network_cost"].where(user, 0.0))

    # pools
    pools = []
    platform_pods = pod_nodes[pod_nodes["is_platform_hour"]]
    pools.append(
        platform_pods.groupby([*base, "node"], as_index=False)["compute_cost"]
        .sum()
        .rename(columns={"compute_cost": "amount"})
        .assign(cost_family="compute", pool="platform")
    )
    platform_nodes = node_hours[node_hours["is_platform_node"]]
    workers = node_hours[~node_hours["is_platform_node"]]
    pools.append(
        platform_nodes.groupby([*base, "node"], as_index=False)["remainder"]
        .sum()
        .rename(columns={"remainder": "amount"})
        .assign(cost_family="compute", pool="platform")
    )
    pools.append(
        workers.groupby([*base, "node"], as_index=False)["remainder"]
        .sum()
        .rename(columns={"remainder": "amount"})
        .assign(cost_family="compute", pool="infrastructure_idle")
    )
    fees = pricing.platform_fees
    if not fees.empty:
        fees = fees.assign(usage_date=pd.to_datetime(fees["usage_date"]).dt.date)
        pools.append(
            fees.groupby([*base, "cost_family"], as_index=False)["cost"]
            .sum()
            .rename(columns={"cost": "amount"})
            .assign(node=None, pool="platform")
        )
    platform_ns = attributed[~user]
    for family, column in (("storage", "storage_cost"), ("network", "network_cost")):
        pools.append(
            platform_ns.groupby(base, as_index=False)[column]
            .sum()
            .rename(columns={column: "amount"})
            .assign(node=None, cost_family=family, pool="platform")
        )
    pools.append(
        unattributed.groupby(base, as_index=False)["storage_cost"]
        .sum()
        .rename(columns={"storage_cost": "amount"})
        .assign(node=None, cost_family="storage", pool="unattributed_storage")
    )
    network = pricing.network_pool
    if not network.empty:
        network = network.assign(usage_date=pd.to_datetime(network["usage_date"]).dt.date)
        pools.append(
            network.groupby(base, as_index=False)["cost"]
            .sum()
            .rename(columns={"cost": "amount"})
            .assign(node=None, cost_family="network", pool="unattributed_network")
        )
    # workload idle: `owner` keeps it with each pod's owner; any other rule pools it per node
    user_hours = pod_nodes[~pod_nodes["is_platform_hour"]]
    idle_by_node = user_hours.groupby([*base, "node", "namespace", "pod"], as_index=False)[
        "workload_idle_cost"
    ].sum()
    owner_of = attributed[attributed["pod"].notna()][[*base, "namespace", "pod", *OWNER]]
    idle_by_node = idle_by_node.merge(owner_of, on=[*base, "namespace", "pod"], how="left")
    keeps_owner = {
        cluster: settings.pool_rules(cluster)["workload_idle"].rule == "owner"
        for cluster in idle_by_node["cluster_id"].unique()
    }
    owner_rule = idle_by_node["cluster_id"].map(keeps_owner).fillna(False).astype(bool)
    kept = idle_by_node[owner_rule]
    book(kept, "compute", "workload_idle_cost", kept["workload_idle_cost"])
    pooled = idle_by_node[~owner_rule]
    pools.append(
        pooled.groupby([*base, "node"], as_index=False)["workload_idle_cost"]
        .sum()
        .rename(columns={"workload_idle_cost": "amount"})
        .assign(cost_family="compute", pool="workload_idle")
    )
    pool_frame = pd.concat([p for p in pools if not p.empty], ignore_index=True)
    pool_frame = pool_frame[pool_frame["amount"] != 0]

    basis = _basis(attributed, pod_nodes, user)
    platform_basis = _platform_basis(pod_nodes, settings)
    shares = distribute(pool_frame, basis, settings, platform_basis)
    rows.append(shares)

    unallocated = pricing.unallocated
    if not unallocated.empty:
        unallocated = unallocated.assign(
            usage_date=pd.to_datetime(unallocated["usage_date"]).dt.date
        )
        part = unallocated.groupby([*base, "cost_family"], as_index=False)["cost"].sum()
        for name, value in zip(OWNER, ("unallocated",) * 3 + ("unallocated",), strict=True):
            part[name] = value
        part["column"] = "unallocated_cost"
        part["amount"] = part.pop("cost")
        rows.append(part)

    long = pd.concat(rows, ignore_index=True)
    long = long[long["amount"] != 0]
    keys = [*base, "cost_family", "team", "cost_center", "application", "owner_status"]
    wide = long.pivot_table(
        index=keys, columns="column", values="amount", aggfunc="sum", fill_value=0.0
    ).reset_index()
    wide.columns.name = None
    columns = [
        "direct_cost",
        "workload_idle_cost",
        "platform_share_cost",
        "infrastructure_idle_share_cost",
        "workload_idle_share_cost",
        "unattributed_storage_share_cost",
        "unattributed_network_share_cost",
        "unallocated_cost",
    ]
    for column in columns:
        if column not in wide:
            wide[column] = 0.0
    wide["total_cost"] = wide[columns].sum(axis=1)
    return wide[[*keys, *columns, "total_cost"]].sort_values(keys).reset_index(drop=True)


def _basis(attributed, pod_nodes, user) -> pd.DataFrame:
    """Each owner's direct cost per node (compute) and without a node (storage, network)."""
    base = ["cluster_id", "usage_date"]
    hours = pod_nodes[~pod_nodes["is_platform_hour"]]
    per_node = hours.groupby([*base, "node", "namespace", "pod"], as_index=False)[
        ["cpu_used", "memory_used", "gpu_cost", "cpu_cost", "memory_cost"]
    ].sum()
    owner_of = attributed[attributed["pod"].notna()][[*base, "namespace", "pod", *OWNER]]
    per_node = per_node.merge(owner_of, on=[*base, "namespace", "pod"], how="left")
    # SPEC silent on what the `cpu` / `memory` bases measure; read as the owner's CPU / memory
    # cost (fct_pod_costs_daily's cpu_cost / memory_cost, claims included), like `direct`
    # is its direct cost.
    compute = per_node.assign(
        cpu=per_node["cpu_cost"],
        memory=per_node["memory_cost"],
        storage=0.0,
        network=0.0,
    )
    users = attributed[user]
    other = users.assign(
        node=None,
        cpu=0.0,
        memory=0.0,
        storage=users["storage_cost"],
        network=users["network_cost"],
    )
    frame = pd.concat(
        [
            compute[[*base, "node", *OWNER, "cpu", "memory", "storage", "network"]],
            other[[*base, "node", *OWNER, "cpu", "memory", "storage", "network"]],
        ],
        ignore_index=True,
    )
    used = pd.concat(
        [
            # SPEC §5: direct = the used cost of user pods, their GPU time included (§5's
            # GPU split), as the pods' own used_cost counts it
            per_node["cpu_used"] + per_node["memory_used"] + per_node["gpu_cost"],
            users["storage_cost"] + users["network_cost"],
        ],
        ignore_index=True,
    )
    frame["direct"] = used.to_numpy()
    return frame


def _platform_basis(pod_nodes, settings) -> pd.DataFrame:
    base = ["cluster_id", "usage_date"]
    hours = pod_nodes[pod_nodes["is_platform_hour"]]
    frame = hours.groupby([*base, "node"], as_index=False)[
        ["cpu_used", "memory_used", "gpu_cost", "cpu_cost", "memory_cost"]
    ].sum()
    for name, value in zip(OWNER, platform_owner(settings), strict=True):
        frame[name] = value
    frame["direct"] = frame["cpu_used"] + frame["memory_used"] + frame["gpu_cost"]
    frame = frame.drop(columns="gpu_cost")
    frame = frame.rename(columns={"cpu_cost": "cpu", "memory_cost": "memory"})
    frame["storage"] = 0.0
    frame["network"] = 0.0
    return frame
