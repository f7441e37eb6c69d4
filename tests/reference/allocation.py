"""Hourly allocation (SPEC §5): node-day cost to node-hours, node-hours to pod-hours, and the
five disjoint categories."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.reference.gpus import gpu_share, node_gpu_days, pod_gpu_hours, read_seed
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
    pods: pd.DataFrame,
    node_days: pd.DataFrame,
    settings: Settings,
    *,
    gpus: pd.DataFrame | None = None,
    node_labels: pd.DataFrame | None = None,
    config: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Returns (pod_hours with cost columns, node_hours with their remainder).

    pods needs: cluster_id, node, hour, usage_date, namespace, pod, the usage / request /
    capacity seconds, role."""
    keys = ["cluster_id", "node", "hour"]
    # one integer id per node-hour, so every later grouping is on integers
    frame = pods.reset_index(drop=True)
    frame["_nh"] = frame.groupby(keys, sort=True).ngroup()
    first = frame.drop_duplicates("_nh").sort_values("_nh")
    node_hours = pd.DataFrame(
        {
            "_nh": first["_nh"].to_numpy(),
            "cluster_id": first["cluster_id"].to_numpy(),
            "node": first["node"].to_numpy(),
            "hour": first["hour"].to_numpy(),
            "role": first["role"].to_numpy(),
        }
    )
    by_hour = frame.groupby("_nh")
    node_hours["cores"] = by_hour["node_capacity_cpu_cores"].max().to_numpy()
    node_hours["cap_cpu"] = by_hour["node_capacity_cpu_core_seconds"].max().to_numpy()
    node_hours["cap_mem"] = by_hour["node_capacity_memory_byte_seconds"].max().to_numpy()
    node_hours["usage_date"] = node_hours["hour"].dt.date
    node_hours["f"] = np.where(
        node_hours["cores"] > 0, node_hours["cap_cpu"] / (node_hours["cores"] * 3600.0), 0.0
    )
    day_keys = ["cluster_id", "node", "usage_date"]
    node_day = node_hours.groupby(day_keys, sort=False).ngroup()
    node_hours["sum_f"] = node_hours["f"].groupby(node_day).transform("sum")
    node_hours["n_hours"] = node_hours["f"].groupby(node_day).transform("size")
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
    # GPU nodes: the GPU share of the node-hour is its GPU part; CPU and memory split the rest.
    gpus = gpus if gpus is not None else pd.DataFrame()
    labels = node_labels if node_labels is not None else pd.DataFrame()
    gpu_days = node_gpu_days(labels, gpus)
    node_hours["gpu_count"] = 0.0
    node_hours["gpu_part"] = 0.0
    if not gpu_days.empty:
        seed = read_seed()
        gpu_days = gpu_days.assign(
            share=[
                gpu_share(t, m, config or {}, seed)
                for t, m in zip(gpu_days["instance_type"], gpu_days["gpu_model"], strict=True)
            ]
        )
        node_hours = node_hours.drop(columns=["gpu_count", "gpu_part"]).merge(
            gpu_days[[*day_keys, "gpu_count", "share"]], on=day_keys, how="left"
        )
        node_hours["gpu_count"] = node_hours["gpu_count"].fillna(0.0)
        node_hours["gpu_part"] = node_hours["hour_cost"] * node_hours["share"].fillna(0.0)
        node_hours = node_hours.drop(columns="share")
    node_hours = node_hours.sort_values("_nh").reset_index(drop=True)
    nh = frame["_nh"].to_numpy()
    cap_cpu = node_hours["cap_cpu"].to_numpy()[nh]
    cap_mem = node_hours["cap_mem"].to_numpy()[nh]
    hour_cost = node_hours["hour_cost"].to_numpy()[nh]
    rest_cost = hour_cost - node_hours["gpu_part"].to_numpy()[nh]
    for resource, usage, request, capacity, weight in (
        (
            "cpu",
            "pod_usage_cpu_core_seconds",
            "pod_request_cpu_core_seconds",
            cap_cpu,
            settings.cpu_weight,
        ),
        (
            "memory",
            "pod_usage_memory_byte_seconds",
            "pod_request_memory_byte_seconds",
            cap_mem,
            settings.memory_weight,
        ),
    ):
        with np.errstate(divide="ignore", invalid="ignore"):
            claim = np.where(capacity > 0, np.maximum(frame[request], frame[usage]) / capacity, 0.0)
            usage_ratio = np.where(capacity > 0, frame[usage] / capacity, 0.0)
        claims = np.bincount(nh, weights=claim, minlength=len(node_hours))[nh]
        scale = np.where(claims > 1.0, 1.0 / np.where(claims > 0, claims, 1.0), 1.0)
        part = rest_cost * weight
        frame[f"{resource}_cost"] = part * claim * scale
        frame[f"{resource}_used"] = part * np.minimum(usage_ratio, claim * scale)
        frame[f"{resource}_overcommitted"] = claims > 1.0
    # A pod's GPU cost is its GPU-seconds' share of each GPU it held. The GPU report says how
    # long a pod held a GPU, not how busy it kept it, so held time counts as used (SPEC §12:
    # usage with no other request gives efficiency 1.0) and GPU time nobody held is idle.
    held = pod_gpu_hours(gpus, node_hours)
    pod_keys = ["cluster_id", "node", "hour", "namespace", "pod"]
    if held.empty:
        frame["gpu_seconds"] = 0.0
        frame["gpu_cost"] = 0.0
    else:
        frame = frame.merge(held, on=pod_keys, how="left")
        frame["gpu_seconds"] = frame["gpu_seconds"].fillna(0.0)
        frame["gpu_cost"] = frame["gpu_cost"].fillna(0.0)
    frame["used_cost"] = frame["cpu_used"] + frame["memory_used"] + frame["gpu_cost"]
    frame["compute_cost"] = frame["cpu_cost"] + frame["memory_cost"] + frame["gpu_cost"]
    frame["workload_idle_cost"] = frame["compute_cost"] - frame["used_cost"]
    # Platform is decided per pod-hour: a platform namespace, or any pod on a platform node.
    lookup = {ns: settings.is_platform_namespace(ns) for ns in frame["namespace"].unique()}
    frame["is_platform_hour"] = frame["namespace"].map(lookup).astype(bool) | frame["role"].isin(
        PLATFORM_ROLES
    )
    frame["is_overcommitted"] = frame["cpu_overcommitted"] | frame["memory_overcommitted"]
    claimed = np.bincount(nh, weights=frame["compute_cost"], minlength=len(node_hours))
    node_hours["remainder"] = node_hours["hour_cost"] - claimed
    node_hours["is_platform_node"] = node_hours["role"].isin(PLATFORM_ROLES)
    over = np.bincount(
        nh, weights=frame["is_overcommitted"].astype(float), minlength=len(node_hours)
    )
    node_hours["is_overcommitted"] = over > 0
    return frame, node_hours
