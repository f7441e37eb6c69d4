"""GPU nodes (SPEC §5), written from the spec: the GPU part of a GPU node's cost and its split
among the pods by GPU-seconds on each GPU.

SPEC §5: "GPU nodes (a `nvidia.com/gpu` capacity or the operator's GPU report): the GPU part of
the node cost (a configurable share per instance type or GPU model, default the GPU's share of
the instance's list price from a shipped table of common GPU instance types, else a configured
default) is split hourly by each pod's GPU-seconds on each GPU (a MIG slice counts its profile's
fraction of the GPU; time-sliced sharing counts uptime); GPU time no pod used is idle like any
other; the rest of the node cost by CPU and memory."
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

# README: `gpu.default_share` defaults to 0.75.
DEFAULT_SHARE = 0.75
# The shipped table of common GPU instance types is data, not logic (README: seeds/).
SEED = Path(__file__).resolve().parents[2] / "seeds" / "gpu_instance_types.csv"
# NVIDIA's MIG user guide: GPU slices per model (A30 4; A100, H100, H200, B200 7).
MIG_SLICES = (("A30", 4), ("RTX PRO 6000", 4), ("RTX PRO 5000", 2))


def _label_map(text: str) -> dict[str, str]:
    pairs = {}
    for part in str(text or "").split("|"):
        key, _, value = part.partition(":")
        pairs[key.strip().lower()] = value.strip()
    return pairs


def node_gpu_days(node_labels: pd.DataFrame, gpus: pd.DataFrame) -> pd.DataFrame:
    """cluster_id, node, usage_date, gpu_count, gpu_model, instance_type for every node-day
    with GPUs: the `nvidia.com/gpu.count` label of its last labelled hour that day (operator
    spelling `label_nvidia_com_gpu_count`) or, when more, the GPUs the GPU report shows."""
    frames = []
    if not node_labels.empty:
        labels = node_labels.assign(usage_date=node_labels["hour"].dt.date)
        labels = labels.sort_values("hour").drop_duplicates(
            ["cluster_id", "node", "usage_date"], keep="last"
        )
        parsed = labels["node_labels"].map(_label_map)

        def get(*keys):
            return parsed.map(lambda m: next((m[k] for k in keys if m.get(k)), None))

        frames.append(
            pd.DataFrame(
                {
                    "cluster_id": labels["cluster_id"].to_numpy(),
                    "node": labels["node"].to_numpy(),
                    "usage_date": labels["usage_date"].to_numpy(),
                    "labelled": pd.to_numeric(
                        get("label_nvidia_com_gpu_count", "nvidia.com/gpu.count"), errors="coerce"
                    )
                    .fillna(0)
                    .to_numpy(),
                    "label_model": get(
                        "label_nvidia_com_gpu_product", "nvidia.com/gpu.product"
                    ).to_numpy(),
                    # SPEC silent on where a node's instance type comes from: its
                    # `node.kubernetes.io/instance-type` label.
                    "instance_type": get(
                        "label_node_kubernetes_io_instance_type",
                        "label_beta_kubernetes_io_instance_type",
                        "node.kubernetes.io/instance-type",
                    ).to_numpy(),
                }
            )
        )
    keys = ["cluster_id", "node", "usage_date"]
    labelled = (
        frames[0]
        if frames
        else pd.DataFrame(columns=[*keys, "labelled", "label_model", "instance_type"])
    )
    reported = (
        gpus.groupby(keys, as_index=False).agg(
            reported=("gpu_uuid", "nunique"), report_model=("gpu_model_name", "max")
        )
        if not gpus.empty
        else pd.DataFrame(columns=[*keys, "reported", "report_model"])
    )
    days = labelled.merge(reported, on=keys, how="outer")
    days["gpu_count"] = np.maximum(
        pd.to_numeric(days["labelled"], errors="coerce").fillna(0).to_numpy(),
        pd.to_numeric(days["reported"], errors="coerce").fillna(0).to_numpy(),
    )
    days["gpu_model"] = days["report_model"].where(
        days["report_model"].notna(), days["label_model"]
    )
    return days[days["gpu_count"] > 0][[*keys, "gpu_count", "gpu_model", "instance_type"]]


def gpu_share(instance_type, gpu_model, config: dict, seed: dict[str, float]) -> float:
    """The configured share for the instance type, else the first configured GPU model the
    model name contains (case-insensitive, in list order), else the seed, else the default."""
    section = (config or {}).get("gpu") or {}
    entries = section.get("shares") or []
    itype = str(instance_type or "").strip().lower()
    model = str(gpu_model or "").lower()
    for entry in entries:
        if "instance_type" in entry and itype and entry["instance_type"].strip().lower() == itype:
            return float(entry["share"])
    for entry in entries:
        if "gpu_model" in entry and model and entry["gpu_model"].strip().lower() in model:
            return float(entry["share"])
    if itype in seed:
        return seed[itype]
    return float(section.get("default_share", DEFAULT_SHARE))


def read_seed() -> dict[str, float]:
    table = pd.read_csv(SEED)
    types = table["instance_type"].str.lower()
    return dict(zip(types, table["gpu_share"].astype(float), strict=True))


def slice_fraction(profile, max_slices, model) -> float:
    """A MIG slice's fraction of its GPU: the profile's compute slices (`3g.20gb` → 3) over the
    GPU's slices; a GPU without a MIG profile is held whole."""
    match = re.match(r"^\s*(\d+)g", str(profile or ""))
    if not match:
        return 1.0
    try:
        slices = float(max_slices)
    except (TypeError, ValueError):
        slices = 0.0
    if not slices > 0:
        name = str(model or "").upper()
        slices = next((n for key, n in MIG_SLICES if key in name), 7)
    return int(match.group(1)) / slices


def pod_gpu_hours(gpus: pd.DataFrame, node_hours: pd.DataFrame) -> pd.DataFrame:
    """Per pod-hour (cluster_id, node, hour, namespace, pod): gpu_seconds and gpu_cost.

    node_hours needs cluster_id, node, hour, f, gpu_count, gpu_part. Each GPU costs
    gpu_part / gpu_count that hour and offers 3600 × f seconds; a row claims uptime × fraction
    of them; claims on one GPU past its seconds (time-sliced pods) are scaled down to it."""
    keys = ["cluster_id", "node", "hour", "namespace", "pod"]
    if gpus.empty:
        return pd.DataFrame(columns=[*keys, "gpu_seconds", "gpu_cost"])
    rows = gpus.merge(
        node_hours[["cluster_id", "node", "hour", "f", "gpu_count", "gpu_part"]],
        on=["cluster_id", "node", "hour"],
    )
    rows = rows[rows["gpu_count"] > 0]
    fraction = [
        slice_fraction(p, m, g)
        for p, m, g in zip(
            rows["mig_profile"], rows["gpu_max_slices"], rows["gpu_model_name"], strict=True
        )
    ]
    rows = rows.assign(gpu_seconds=rows["gpu_pod_uptime"].fillna(0.0) * np.array(fraction))
    seconds = 3600.0 * rows["f"]
    rows["claim"] = np.where(seconds > 0, rows["gpu_seconds"] / seconds.where(seconds > 0, 1), 0)
    total = rows.groupby(["cluster_id", "node", "hour", "gpu_uuid"])["claim"].transform("sum")
    scale = np.where(total > 1.0, 1.0 / total.where(total > 0, 1.0), 1.0)
    rows["gpu_cost"] = rows["gpu_part"] / rows["gpu_count"] * rows["claim"] * scale
    return rows.groupby(keys, as_index=False)[["gpu_seconds", "gpu_cost"]].sum()
