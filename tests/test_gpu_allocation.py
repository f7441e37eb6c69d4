"""GPU nodes priced right (SPEC §5, issue 17 item 6), end to end on one hand-written on-prem day.

Three nodes (4 cores, 16 GiB each) up all day, priced from the rate card:
- `gpu1` at $10/h with 4 GPUs (`nvidia.com/gpu.count=4`, NVIDIA A10G), instance type
  `lab-a10g`, whose GPU share `gpu.shares` sets to 0.8: a GPU part of $8/h ($2 per GPU-hour),
  CPU and memory $1/h each. `train-0` holds GPU-0 all day (24 × $2 = $48), `train-1` GPU-1 for
  hours 0–11 ($24); `infer-0` and `infer-1` time-slice GPU-2, each up the whole hour, so they
  share it by uptime ($1/h each: $24 + $24); GPU-3 is never used. GPU claimed $120, GPU idle
  $72. Every pod uses 0.5 core and 2 GiB (1/8 of the node: $0.25/h of CPU + memory).
- `mig1` at $7/h with one A100 split by MIG; `gpu.shares` gives GPU model `a100` 0.5: GPU part
  $3.50/h, CPU and memory $1.75/h each. `mig-a` holds a `3g.20gb` slice (3/7 of the GPU:
  $1.50/h → $36), `mig-b` a `1g.5gb` slice (1/7: $0.50/h → $12); 3/7 of the GPU is idle
  ($36). Each uses 1 core and 4 GiB (1/4: $0.875/h → $21).
- `cpu1` at $1/h, no GPUs: `web-0` with 1 core and 4 GiB ($0.25/h → $6), the rest idle ($18).
Cluster-day: $432 in scope; direct = 141 + 90 + 6 = 237; infrastructure idle = (72 + 27) +
(36 + 42) + 18 = 195; 237 + 195 = 432. Counting a MIG slice as the whole GPU would give
`mig-a` and `mig-b` $42 each (two whole claims on one GPU, scaled by 1/2).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.hourly_landing import write_csv, write_nodes, write_pod_usage
from tests.reference import reference_ledger
from tests.reference.compare import compare_to_warehouse
from tests.warehouse_builder import build_warehouse, query

DAY = "2026-10-05"
CLUSTER = "gpulab"
CONFIG = {
    "clusters": [{"id": CLUSTER, "provider": "on_prem"}],
    "node_prices": [
        {"cluster": CLUSTER, "node": "gpu1", "hourly_price": 10.0},
        {"cluster": CLUSTER, "node": "mig1", "hourly_price": 7.0},
        {"cluster": CLUSTER, "node": "cpu1", "hourly_price": 1.0},
    ],
    "gpu": {
        "shares": [
            {"gpu_model": "h100", "share": 0.9},
            {"instance_type": "lab-a10g", "share": 0.8},
            {"gpu_model": "a100", "share": 0.5},
        ]
    },
}
GPU_COLUMNS = [
    "report_period_start",
    "report_period_end",
    "interval_start",
    "interval_end",
    "node",
    "namespace",
    "pod",
    "gpu_uuid",
    "gpu_model_name",
    "gpu_vendor_name",
    "gpu_memory_capacity_mib",
    "gpu_pod_uptime",
    "gpu_max_slices",
    "mig_instance_id",
    "mig_profile",
    "mig_strategy",
]
A10G, A100 = "NVIDIA A10G", "NVIDIA A100-SXM4-40GB"
# (hours, node, pod, GPU, model, MIG instance, MIG profile)
HELD = [
    (range(24), "gpu1", "train-0", "GPU-0", A10G, "", ""),
    (range(12), "gpu1", "train-1", "GPU-1", A10G, "", ""),
    (range(24), "gpu1", "infer-0", "GPU-2", A10G, "", ""),
    (range(24), "gpu1", "infer-1", "GPU-2", A10G, "", ""),
    (range(24), "mig1", "mig-a", "GPU-M", A100, "1", "3g.20gb"),
    (range(24), "mig1", "mig-b", "GPU-M", A100, "2", "1g.5gb"),
]
NODE_LABELS = {
    "gpu1": "label_node_kubernetes_io_instance_type:lab-a10g|label_nvidia_com_gpu_count:4",
    "mig1": "label_node_kubernetes_io_instance_type:lab-a100|label_nvidia_com_gpu_count:1"
    "|label_nvidia_com_mig_strategy:mixed",
    "cpu1": "label_node_kubernetes_io_instance_type:lab-cpu",
}


def _write_gpu_day(landing: Path) -> None:
    folder = landing / "usage" / CLUSTER / DAY
    stamp = f"{DAY} {{hour:02d}}:{{minute}} +0000 UTC"
    period = {
        "report_period_start": "2026-10-01 00:00:00 +0000 UTC",
        "report_period_end": "2026-11-01 00:00:00 +0000 UTC",
    }
    gpu_rows = []
    for hours, node, pod, gpu, model, mig_id, profile in HELD:
        for hour in hours:
            gpu_rows.append(
                {
                    **period,
                    "interval_start": stamp.format(hour=hour, minute="00:00"),
                    "interval_end": stamp.format(hour=hour, minute="59:59"),
                    "node": node,
                    "namespace": "ml",
                    "pod": pod,
                    "gpu_uuid": gpu,
                    "gpu_model_name": model,
                    "gpu_vendor_name": "nvidia_com_gpu",
                    "gpu_memory_capacity_mib": 40960 if model == A100 else 23028,
                    "gpu_pod_uptime": "3600.000000",
                    "gpu_max_slices": "" if not profile else "7",
                    "mig_instance_id": mig_id,
                    "mig_profile": profile,
                    "mig_strategy": "mixed" if profile else "",
                }
            )
    write_csv(folder / "gpu.csv", GPU_COLUMNS, gpu_rows)
    label_rows = [
        {
            **period,
            "interval_start": stamp.format(hour=hour, minute="00:00"),
            "interval_end": stamp.format(hour=hour, minute="59:59"),
            "node": node,
            "node_labels": labels,
        }
        for hour in range(24)
        for node, labels in NODE_LABELS.items()
    ]
    write_csv(
        folder / "node_labels.csv",
        ["report_period_start", "report_period_end", "interval_start", "interval_end", "node"]
        + ["node_labels"],
        label_rows,
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"] += ["gpu.csv", "node_labels.csv"]
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gpu_allocation")
    landing = root / "landing"
    pod_hours = []
    for hours, node, pod, *_ in HELD:
        cores, gib = (1, 4) if node == "mig1" else (0.5, 2)
        pod_hours += [
            (hour, node, "worker", "ml", pod, cores, gib, "label_team:ml") for hour in hours
        ]
    pod_hours += [
        (hour, "cpu1", "worker", "web", "web-0", 1, 4, "label_team:web") for hour in range(24)
    ]
    write_pod_usage(landing, CLUSTER, DAY, pod_hours)
    _write_gpu_day(landing)
    write_nodes(landing, CLUSTER, DAY, ["gpu1", "mig1", "cpu1"])
    return build_warehouse(root, landing, CONFIG)


def test_node_cost_is_split_into_gpu_cpu_and_memory(warehouse):
    rows = query(
        warehouse,
        """select node, node_cost, gpu_count, gpu_share_ratio, gpu_share_source, gpu_cost,
                  gpu_model_name
           from marts.fct_node_costs_daily where cluster_id = ? order by node""",
        [CLUSTER],
    )
    got = {row[0]: row[1:] for row in rows}
    assert got["cpu1"][:5] == (pytest.approx(24.0), 0, 0.0, None, 0.0)
    assert got["gpu1"][:5] == (pytest.approx(240.0), 4, 0.8, "instance_type_setting", 192.0)
    assert got["mig1"][:5] == (pytest.approx(168.0), 1, 0.5, "gpu_model_setting", 84.0)
    assert got["mig1"][5] == A100
    # the rest of each node-hour goes to CPU and memory by their weights (0.5 / 0.5)
    [(cpu, memory, gpu)] = query(
        warehouse,
        """select sum(cpu_cost), sum(memory_cost), sum(gpu_cost)
           from intermediate.int_node_hours_priced where node = 'gpu1'""",
    )
    assert (cpu, memory, gpu) == (pytest.approx(24.0), pytest.approx(24.0), pytest.approx(192.0))


def test_each_pods_gpu_cost_is_its_gpu_seconds_share(warehouse):
    rows = query(
        warehouse,
        """select pod, gpu_hours, gpu_cost, cpu_cost + memory_cost, workload_idle_cost, total_cost
           from marts.fct_pod_costs_daily where cluster_id = ? order by pod""",
        [CLUSTER],
    )
    got = {pod: values for pod, *values in rows}
    expected = {
        # pod: gpu-hours, GPU cost, CPU + memory cost
        "train-0": (24, 48.0, 6.0),
        "train-1": (12, 24.0, 3.0),
        "infer-0": (24, 24.0, 6.0),  # time-sliced with infer-1: half of GPU-2 each hour
        "infer-1": (24, 24.0, 6.0),
        "mig-a": (24 * 3 / 7, 36.0, 21.0),  # 3g.20gb: 3/7 of the A100
        "mig-b": (24 * 1 / 7, 12.0, 21.0),  # 1g.5gb: 1/7
        "web-0": (0, 0.0, 6.0),
    }
    assert set(got) == set(expected)
    for pod, (gpu_hours, gpu_cost, compute) in expected.items():
        hours, cost, cpu_memory, idle, total = got[pod]
        assert hours == pytest.approx(gpu_hours, abs=1e-9), pod
        assert cost == pytest.approx(gpu_cost, abs=1e-6), pod
        assert cpu_memory == pytest.approx(compute, abs=1e-6), pod
        assert idle == pytest.approx(0, abs=1e-6), pod  # held GPU time is used
        assert total == pytest.approx(gpu_cost + compute, abs=1e-6), pod


def test_unused_gpu_time_is_idle_and_the_cluster_day_adds_up(warehouse):
    [(scope, direct, idle, platform, infra_idle, unallocated, ledger)] = query(
        warehouse,
        """select billed_cost_in_scope, direct_cost, workload_idle_cost, platform_cost,
                  infrastructure_idle_cost, unallocated_cost, ledger_cost
           from marts.fct_cluster_costs_daily where cluster_id = ? and usage_date = ?""",
        [CLUSTER, DAY],
    )
    assert direct == pytest.approx(237.0, abs=1e-6)
    assert idle == pytest.approx(0, abs=1e-6)
    assert platform == pytest.approx(0, abs=1e-6)
    assert infra_idle == pytest.approx(195.0, abs=1e-6)
    assert ledger == pytest.approx(432.0, abs=1e-6)
    assert direct + idle + platform + infra_idle + unallocated == pytest.approx(ledger, abs=1e-6)
    # GPU idle per node: GPU-3 all day + GPU-1 hours 12-23 on gpu1; 3/7 of the A100 on mig1
    rows = query(
        warehouse,
        """select node, sum(unclaimed_gpu_cost) from intermediate.int_node_hours_allocated
           where cluster_id = ? group by node order by node""",
        [CLUSTER],
    )
    assert {n: round(c, 6) for n, c in rows} == {"cpu1": 0.0, "gpu1": 72.0, "mig1": 36.0}


def test_gpu_efficiency_joins_the_efficiency_mart(warehouse):
    [(gpu_cost, gpu_efficiency, compute_cost)] = query(
        warehouse,
        """select gpu_cost, gpu_efficiency, compute_cost from marts.fct_efficiency_daily
           where cluster_id = ? and rollup_level = 'cluster'""",
        [CLUSTER],
    )
    assert gpu_cost == pytest.approx(168.0, abs=1e-6)  # 48 + 24 + 24 + 24 + 36 + 12
    assert gpu_efficiency == pytest.approx(1.0)
    assert compute_cost == pytest.approx(168.0 + 69.0, abs=1e-6)  # + CPU and memory 6+3+6+6+21+21+6


def test_the_reference_ledger_gets_the_same_gpu_split(warehouse):
    """The independent reference (tests/reference/, from the SPEC) on the same landing files:
    the hand-computed GPU costs, and no disagreement with the warehouse."""
    root = warehouse.parent
    ledger = reference_ledger(
        root / "landing", root / "kubeledger.yml", as_of=dt.date(2026, 11, 19)
    )
    gpu = ledger.pod_days.set_index("pod")["gpu_cost"].round(6).to_dict()
    assert gpu == {
        "train-0": 48.0,
        "train-1": 24.0,
        "infer-0": 24.0,
        "infer-1": 24.0,
        "mig-a": 36.0,
        "mig-b": 12.0,
        "web-0": 0.0,
    }
    assert compare_to_warehouse(ledger, warehouse, months=[]) == []
