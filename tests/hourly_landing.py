"""Hand-written landing files for small end-to-end cases: an on-prem cluster's pod usage
report (the koku operator's CSV) and its nodes, priced from a rate card in kubeledger.yml.

Each pod-hour row is (node, role, namespace, pod, cores, GiB, labels): the pod requests and
uses exactly `cores` and `GiB` that hour, so its claim is cores / node cores and GiB / node GiB
and it has no workload idle.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

GIB = 1024**3
POD_COLUMNS = [
    "report_period_start",
    "report_period_end",
    "interval_start",
    "interval_end",
    "node",
    "namespace",
    "pod",
    "pod_usage_cpu_core_seconds",
    "pod_request_cpu_core_seconds",
    "pod_limit_cpu_core_seconds",
    "pod_usage_memory_byte_seconds",
    "pod_request_memory_byte_seconds",
    "pod_limit_memory_byte_seconds",
    "node_capacity_cpu_cores",
    "node_capacity_cpu_core_seconds",
    "node_capacity_memory_bytes",
    "node_capacity_memory_byte_seconds",
    "node_role",
    "resource_id",
    "pod_labels",
]
PodHour = tuple[int, str, str, str, str, float, float, str]


def write_pod_usage(
    landing: Path,
    cluster: str,
    day: str,
    pod_hours: list[PodHour],
    *,
    node_cores: int = 4,
    node_gib: int = 16,
) -> None:
    """One day's pod usage report; a row per (hour, node, role, namespace, pod, cores, GiB,
    labels)."""
    usage = landing / "usage" / cluster / day
    usage.mkdir(parents=True)
    (usage / "manifest.json").write_text(
        json.dumps(
            {
                "uuid": _uuid(f"{cluster}/{day}"),
                "cluster_id": cluster,
                "version": "3.3.0",
                "date": f"{day}T23:59:00Z",
                "files": ["pods.csv"],
            }
        )
    )
    rows = []
    for hour, node, role, namespace, pod, cores, gib, labels in pod_hours:
        rows.append(
            {
                "report_period_start": f"{day[:8]}01 00:00:00 +0000 UTC",
                "report_period_end": "2026-11-01 00:00:00 +0000 UTC",
                "interval_start": f"{day} {hour:02d}:00:00 +0000 UTC",
                "interval_end": f"{day} {hour:02d}:59:59 +0000 UTC",
                "node": node,
                "namespace": namespace,
                "pod": pod,
                "pod_usage_cpu_core_seconds": cores * 3600,
                "pod_request_cpu_core_seconds": cores * 3600,
                "pod_limit_cpu_core_seconds": cores * 3600,
                "pod_usage_memory_byte_seconds": gib * GIB * 3600,
                "pod_request_memory_byte_seconds": gib * GIB * 3600,
                "pod_limit_memory_byte_seconds": gib * GIB * 3600,
                "node_capacity_cpu_cores": node_cores,
                "node_capacity_cpu_core_seconds": node_cores * 3600,
                "node_capacity_memory_bytes": node_gib * GIB,
                "node_capacity_memory_byte_seconds": node_gib * GIB * 3600,
                "node_role": role,
                "resource_id": "",
                "pod_labels": labels,
            }
        )
    write_csv(usage / "pods.csv", POD_COLUMNS, rows)


def _uuid(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"


def write_nodes(landing: Path, cluster: str, day: str, nodes: list[str]) -> None:
    write_csv(
        landing / "cluster" / cluster / "nodes.csv",
        ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
        [
            {
                "cluster_id": cluster,
                "node": node,
                "provider_id": "",
                "first_seen": f"{day}T00:00:00Z",
                "last_seen": f"{day}T23:59:59Z",
            }
            for node in nodes
        ],
    )


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
