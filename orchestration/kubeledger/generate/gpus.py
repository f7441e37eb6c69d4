"""The GPU workloads of a GPU node pool and the operator's GPU report (issue 17 item 6).

On the whole-GPU node (`ng-gpu`, 4 GPUs): `llm-inference` holds GPUs 0-2, one GPU per pod;
the two `notebooks` pods time-share GPU 3. On the MIG node (`ng-mig`, 8 A100s, MIG strategy
mixed): GPU 0 is split into two `3g.20gb` slices (`embedder`) and a `1g.5gb` slice
(`reranker`), GPU 1 is one `7g.40gb` instance (`trainer`); GPUs 2-7 stay idle. The
`nvidia-device-plugin` DaemonSet runs on both. The report has one row per pod, GPU (or MIG
instance) and hour, in the operator's columns; `gpu_pod_uptime` is the seconds the pod ran that
hour.
"""

from __future__ import annotations

from kubeledger.generate.catalog import Template
from kubeledger.generate.context import Context, sql_str
from kubeledger.generate.fleet import Cluster, Fleet, Pool

GPU_REPORT_COLUMNS = (
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
)

_ML = {"app.kubernetes.io/part-of": "ml-serving"}
# (pool name, template, per replica: (GPU index, MIG instance, MIG profile))
GPU_WORKLOADS: tuple[tuple[str, Template, tuple[tuple[int, str, str], ...]], ...] = (
    (
        "ng-gpu",
        Template(
            "ml-training",
            "Deployment",
            "llm-inference",
            {"app.kubernetes.io/name": "llm-inference", **_ML},
            abs_cpu=8.0,
            abs_mem_mib=32768,
            util=0.6,
        ),
        ((0, "", ""), (1, "", ""), (2, "", "")),
    ),
    (
        "ng-gpu",
        Template(
            "ml-training",
            "Deployment",
            "notebooks",
            {"app.kubernetes.io/name": "notebooks", "team": "data-science"},
            abs_cpu=2.0,
            abs_mem_mib=8192,
            util=0.3,
        ),
        ((3, "", ""), (3, "", "")),
    ),
    (
        "ng-mig",
        Template(
            "ml-training",
            "Deployment",
            "embedder",
            {"app.kubernetes.io/name": "embedder", **_ML},
            abs_cpu=8.0,
            abs_mem_mib=65536,
        ),
        ((0, "1", "3g.20gb"), (0, "2", "3g.20gb")),
    ),
    (
        "ng-mig",
        Template(
            "ml-training",
            "Deployment",
            "reranker",
            {"app.kubernetes.io/name": "reranker", **_ML},
            abs_cpu=4.0,
            abs_mem_mib=16384,
        ),
        ((0, "3", "1g.5gb"),),
    ),
    (
        "ng-mig",
        Template(
            "ml-training",
            "Deployment",
            "trainer",
            {"app.kubernetes.io/name": "trainer", "team": "ml-research"},
            abs_cpu=32.0,
            abs_mem_mib=262144,
            util=0.8,
        ),
        ((1, "4", "7g.40gb"),),
    ),
)
DEVICE_PLUGIN = Template(
    "kube-system",
    "DaemonSet",
    "nvidia-device-plugin",
    {"app.kubernetes.io/name": "nvidia-device-plugin"},
    abs_cpu=0.05,
    abs_mem_mib=64,
)


def gpu_uuid(fleet: Fleet, node: str, index: int) -> str:
    return "GPU-" + fleet.rand.uuid("gpu", node, index)


def gpu_placements(slots: dict[int, Pool]) -> list[tuple[int, Template, int, tuple[int, str, str]]]:
    """(slot, template, replica, (GPU index, MIG instance, MIG profile)) of every GPU pod, and
    the device plugin on every GPU slot (GPU index -1)."""
    by_pool = {pool.name: slot for slot, pool in sorted(slots.items()) if pool.gpus}
    placements = []
    for pool_name, template, replicas in GPU_WORKLOADS:
        if pool_name in by_pool:
            for replica, gpu in enumerate(replicas):
                placements.append((by_pool[pool_name], template, replica, gpu))
    for slot in sorted(by_pool.values()):
        placements.append((slot, DEVICE_PLUGIN, slot, (-1, "", "")))
    return placements


def gpu_report_sql(ctx: Context, cluster: Cluster, lo: int, hi: int, reported: str) -> str:
    """One row per GPU pod, GPU (or MIG instance) and hour in [lo, hi) where `reported` (SQL on
    `h` and `node`) holds, as the operator writes them (rows follow hour, node, namespace, pod,
    GPU); `report_day` is the file the row goes to."""
    return f"""
        with seg as (
            select segments.*, gpu_assignments.gpu_uuid, gpu_assignments.gpu_model_name,
                   gpu_assignments.gpu_memory_capacity_mib, gpu_assignments.gpu_max_slices,
                   gpu_assignments.mig_instance_id, gpu_assignments.mig_profile,
                   gpu_assignments.mig_strategy
            from segments
            inner join gpu_assignments
                on gpu_assignments.cluster_id = segments.cluster_id
                and gpu_assignments.pod_uid = segments.pod_uid
            where segments.cluster_id = {sql_str(cluster.cluster_id)}
              and seg_start_h < {hi} and seg_end_h > {lo}
        ),
        expanded as (
            select *, unnest(range(greatest(seg_start_h, {lo}), least(seg_end_h, {hi}))) as h
            from seg
        ),
        timed as (
            select
                expanded.*,
                case
                    when h = inst_start_h then inst_first_secs
                    when h = inst_end_h - 1 then inst_last_secs
                    else 3600
                end as node_secs
            from expanded
            where {reported}
        )
        select
            hours.rp_start as report_period_start,
            hours.rp_end as report_period_end,
            hours.interval_start,
            hours.interval_end,
            timed.node,
            timed.namespace,
            timed.pod,
            timed.gpu_uuid,
            timed.gpu_model_name,
            'nvidia_com_gpu' as gpu_vendor_name,
            timed.gpu_memory_capacity_mib,
            printf('%.6f', cast(case when timed.h = timed.seg_end_h - 1
                                then least(timed.node_secs, timed.seg_last_secs)
                                else timed.node_secs end as double)) as gpu_pod_uptime,
            timed.gpu_max_slices,
            timed.mig_instance_id,
            timed.mig_profile,
            timed.mig_strategy,
            hours.day_idx as report_day
        from timed
        inner join hours on hours.h = timed.h
        order by timed.h, timed.node, timed.namespace, timed.pod, timed.gpu_uuid,
                 timed.mig_instance_id
    """
