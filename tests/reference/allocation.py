"""Hourly allocation (SPEC §5): node-day cost to node-hours, node-hours to pod-hours, and the
five disjoint categories."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.reference.settings import Settings

PLATFORM_ROLES = {"control-plane", "control_plane", "master", "infra"}
_ROLE_LABEL = r"node[-_]role(?:\.|_)kubernetes(?:\.|_)io[/_](control[-_]plane|master|infra)"


def node_roles(pods: pd.DataFrame, node_labels: pd.DataFrame) -> pd.Series:
    """The role of each pod-hour's node: `node_role` when the report has it, else from the node
    labels (`node-role.kubernetes.io/control-plane`, `…/master`, `…/infra`), else worker."""
    raw = pods["node_role"].fillna("")
    lookup = {value: str(value).strip().lower() for value in raw.unique()}
    role = raw.map(lookup)
    missing = role == ""
    if missing.any():
        labels = node_labels.assign(
            label_role=node_labels["node_labels"]
            .fillna("")
            .str.lower()
            .str.extract(_ROLE_LABEL, expand=False)
            .fillna("worker")
            .str.replace("_", "-")
        )
        by_hour = labels.drop_duplicates(["cluster_id", "node", "hour"], keep="last").set_index(
            ["cluster_id", "node", "hour"]
        )["label_role"]
        # SPEC silent on an hour with no node-label row: the node's latest labels are used.
        by_node = (
            labels.sort_values("hour")
            .drop_duplicates(["cluster_id", "node"], keep="last")
            .set_index(["cluster_id", "node"])["label_role"]
        )
        keys = ["cluster_id", "node", "hour"]
        sub = pods.loc[missing, keys]
        hours = sub.drop_duplicates()
        hourly = by_hour.reindex(pd.MultiIndex.from_frame(hours)).to_numpy()
        latest = by_node.reindex(pd.MultiIndex.from_frame(hours[keys[:2]])).to_numpy()
        hours = hours.assign(
            label_role=pd.Series(hourly, index=hours.index)
            .fillna(pd.Series(latest, index=hours.index))
            .fillna("worker")
        )
        found = sub.merge(hours, on=keys, how="left")["label_role"].to_numpy()
        role.loc[missing] = found
    return role.replace({"control_plane": "control-plane"})


def allocate_pod_hours(
    pods: pd.DataFrame, node_days: pd.DataFrame, settings: Settings
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Returns (pod_hours with cost columns, node_hours with their remainder).

    pods needs: cluster_id, node, hour, usage_date, namespace, pod, the usage / request /
    capacity seconds, role."""
    keys = ["cluster_id", "node", "hour"]
    node_hours = (
        pods.groupby(keys, as_index=False)
        .agg(
            cores=("node_capacity_cpu_cores", "max"),
            cap_cpu=("node_capacity_cpu_core_seconds", "max"),
            cap_mem=("node_capacity_memory_byte_seconds", "max"),
            role=("role", "first"),
        )
        .assign(usage_date=lambda f: f["hour"].dt.date)
    )
    node_hours["f"] = np.where(
        node_hours["cores"] > 0, node_hours["cap_cpu"] / (node_hours["cores"] * 3600.0), 0.0
    )
    day_keys = ["cluster_id", "node", "usage_date"]
    node_hours["sum_f"] = node_hours.groupby(day_keys)["f"].transform("sum")
    node_hours["n_hours"] = node_hours.groupby(day_keys)["f"].transform("size")
    costs = node_days[["cluster_id", "node", "usage_date", "node_cost"]]
    costs = costs.groupby(day_keys, as_index=False)["node_cost"].sum()
    node_hours = node_hours.merge(costs, on=day_keys, how="left")
    node_hours["node_cost"] = node_hours["node_cost"].fillna(0.0)
    # SPEC silent on a day whose f sum is 0 (no capacity reported): its hours share evenly.
    share = np.where(
        node_hours["sum_f"] > 0,
        node_hours["f"] / node_hours["sum_f"].where(node_hours["sum_f"] > 0, 1.0),
        1.0 / node_hours["n_hours"],
    )
    node_hours["hour_cost"] = node_hours["node_cost"] * share
    node_hours["cpu_part"] = node_hours["hour_cost"] * settings.cpu_weight
    node_hours["memory_part"] = node_hours["hour_cost"] * settings.memory_weight

    frame = pods.merge(
        node_hours[[*keys, "cap_cpu", "cap_mem", "cpu_part", "memory_part"]], on=keys, how="left"
    )
    for resource, usage, request, capacity in (
        ("cpu", "pod_usage_cpu_core_seconds", "pod_request_cpu_core_seconds", "cap_cpu"),
        ("memory", "pod_usage_memory_byte_seconds", "pod_request_memory_byte_seconds", "cap_mem"),
    ):
        cap = frame[capacity].where(frame[capacity] > 0)
        claim = (np.maximum(frame[request], frame[usage]) / cap).fillna(0.0)
        usage_ratio = (frame[usage] / cap).fillna(0.0)
        claims = claim.groupby([frame[k] for k in keys]).transform("sum")
        scale = np.where(claims > 1.0, 1.0 / claims.where(claims > 0, 1.0), 1.0)
        part = frame[f"{resource}_part"]
        frame[f"{resource}_cost"] = part * claim * scale
        frame[f"{resource}_used"] = part * np.minimum(usage_ratio, claim * scale)
        frame[f"{resource}_overcommitted"] = claims > 1.0
    frame["used_cost"] = frame["cpu_used"] + frame["memory_used"]
    frame["compute_cost"] = frame["cpu_cost"] + frame["memory_cost"]
    frame["workload_idle_cost"] = frame["compute_cost"] - frame["used_cost"]
    # Platform is decided per pod-hour: a platform namespace, or any pod on a platform node.
    lookup = {ns: settings.is_platform_namespace(ns) for ns in frame["namespace"].unique()}
    frame["is_platform_hour"] = frame["namespace"].map(lookup).astype(bool) | frame["role"].isin(
        PLATFORM_ROLES
    )
    frame["is_overcommitted"] = frame["cpu_overcommitted"] | frame["memory_overcommitted"]

    claimed = frame.groupby(keys, as_index=False)["compute_cost"].sum()
    node_hours = node_hours.merge(claimed, on=keys, how="left")
    node_hours["remainder"] = node_hours["hour_cost"] - node_hours["compute_cost"].fillna(0.0)
    node_hours["is_platform_node"] = node_hours["role"].isin(PLATFORM_ROLES)
    over = frame.groupby(keys, as_index=False)["is_overcommitted"].any()
    node_hours = node_hours.merge(over, on=keys, how="left")
    return frame, node_hours
