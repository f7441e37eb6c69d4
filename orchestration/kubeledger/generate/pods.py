"""Workloads, their pods and claims: which pod ran on which node instance, from when to when.

One row per pod and node instance ("segment"); the hourly rows are expanded from these in
DuckDB. Sizes: about pods-per-node x nodes x 2 segments, small next to the pod-hours.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from kubeledger.generate.catalog import NAMESPACE_LABELS, Template, namespaces_for, templates_for
from kubeledger.generate.fleet import (
    GCP_ZONE,
    GIB,
    HOUR,
    Cluster,
    Fleet,
    Instance,
)
from kubeledger.generate.gpus import gpu_placements, gpu_uuid
from kubeledger.generate.ids import K8S_ALPHABET, label_string

MIB = 1024**2
REQUESTED_SHARE = 0.6  # workers' capacity requested by long-running pods
LONG_RUNNING = ("Deployment", "StatefulSet", "Pod")
MAX_REPLICAS = 25  # past this a scaled template is split into numbered copies
GPU_UID_BASE = 10**12  # GPU pods' uids: a range of their own, so no other pod's hashes move


@dataclass
class Workload:
    wid: int
    cluster_id: str
    template: Template
    name: str
    replicas: int
    cpu_req: float
    mem_req: int

    @property
    def kind(self) -> str:
        return self.template.kind


@dataclass
class Intent:
    """A pod the scheduler wanted on a slot for [start_h, end_h)."""

    workload: Workload
    replica: int
    run: int  # ReplicaSet generation, or the CronJob run's day
    slot: int
    start_h: int
    end_h: int
    last_secs: int = HOUR


@dataclass
class ClusterPods:
    segments: list[dict]
    owners: list[dict]
    pvcs: list[dict]
    namespaces: list[dict]
    lb_services: list[dict]
    omitted_owner_pods: list[str]
    bare_pods: list[str]
    gpu_segments: list[dict] = field(default_factory=list)  # pods of the GPU pools
    gpu_assignments: list[dict] = field(default_factory=list)  # their GPUs, per segment


def build_cluster_pods(fleet: Fleet, cluster: Cluster, first_uid: int) -> ClusterPods:
    params, rand = fleet.params, fleet.rand
    cid = cluster.cluster_id
    instances = fleet.cluster_instances(cid)
    slots = fleet.slots(cid)
    autoscaled = fleet.autoscaled_slots(cid)
    workers = [
        slot
        for slot, pool in slots.items()
        if pool.role == "worker" and slot not in autoscaled and not pool.gpus
    ]
    # GPU pools are tainted: only GPU workloads (and the NVIDIA device plugin) run there
    ungpu = sorted(slot for slot, pool in slots.items() if not pool.gpus)
    control_planes = [slot for slot, pool in slots.items() if pool.role == "control-plane"]
    # Round-robin seats: a slot appears once per unit of weight, interleaved.
    max_weight = max(slots[s].weight for s in workers)
    seats = [s for rank in range(max_weight) for s in workers if slots[s].weight > rank]

    workloads = _workloads(fleet, cluster, workers)
    intents: list[Intent] = []
    ordinal = 0
    hours = params.hours
    for workload in workloads:
        template = workload.template
        if workload.kind == "DaemonSet":
            intents += [Intent(workload, slot, 0, slot, 0, hours) for slot in ungpu]
        elif workload.kind == "Static":
            intents += [Intent(workload, slot, 0, slot, 0, hours) for slot in control_planes]
        elif workload.kind == "CronJob":
            for day in range(params.days):
                start = day * 24 + template.cron_hour
                slot = seats[rand.u64("cron-slot", cid, workload.name, day) % len(seats)]
                intents.append(_run_intent(workload, day, slot, start, template.run_secs, hours))
        elif workload.kind == "Job":
            day = min(1, params.days - 1)
            intents.append(
                _run_intent(workload, 0, workers[0], day * 24 + 10, template.run_secs, hours)
            )
        else:
            rollout = (
                rand.randint(
                    int(hours * 0.3),
                    max(int(hours * 0.3), int(hours * 0.7) - 1),
                    "rollout",
                    cid,
                    workload.name,
                )
                if workload.kind == "Deployment"
                else None
            )
            for replica in range(workload.replicas):
                slot = seats[ordinal % len(seats)]
                ordinal += 1
                if rollout is None:
                    intents.append(Intent(workload, replica, 0, slot, 0, hours))
                else:
                    intents.append(Intent(workload, replica, 0, slot, 0, rollout))
                    intents.append(Intent(workload, replica, 1, slot, rollout, hours))
    intents += _scaled_out(fleet, cluster, workloads, autoscaled)
    gpu_of: dict[int, tuple[int, str, str]] = {}
    for slot, template, replica, gpu in gpu_placements(slots):
        mem = (template.abs_mem_mib or 0) * MIB
        workload = Workload(
            len(workloads) + len(gpu_of),
            cid,
            template,
            template.name,
            1,
            template.abs_cpu or 0,
            mem,
        )
        intent = Intent(workload, replica, 0, slot, 0, hours)
        intents.append(intent)
        gpu_of[id(intent)] = gpu

    by_slot: dict[int, list[Instance]] = {}
    for instance in instances:
        by_slot.setdefault(instance.slot, []).append(instance)

    segments: list[dict] = []
    gpu_segments: list[dict] = []
    gpu_assignments: list[dict] = []
    owners: dict[tuple[str, str, str], dict] = {}
    omitted: set[str] = set()
    bare: set[str] = set()
    for intent in intents:
        for instance in by_slot[intent.slot]:
            start = max(intent.start_h, instance.start_h)
            end = min(intent.end_h, instance.end_h)
            if start >= end:
                continue
            if workload_is_bare(intent.workload.template) and instance.gen > 0:
                continue  # a bare pod dies with its node; nothing recreates it
            pod, labels, pod_owners = _pod_identity(fleet, cluster, intent, instance)
            if id(intent) in gpu_of:
                uid = GPU_UID_BASE * (cluster.index + 1) + len(gpu_segments)
                gpu_segments.append(_segment(uid, intent, instance, pod, labels, start, end))
                gpu_assignments += _gpu_assignment(
                    fleet, cid, uid, instance, pod, gpu_of[id(intent)]
                )
            else:
                segments.append(
                    _segment(first_uid + len(segments), intent, instance, pod, labels, start, end)
                )
            template = intent.workload.template
            if template.omit_owner and intent.run == 0:
                # kube-state-metrics no longer knew the first ReplicaSet's pods
                omitted.add(pod)
                pod_owners = [row for row in pod_owners if row[0] != "Pod"]
            if workload_is_bare(template):
                bare.add(pod)
            for kind, name, owner_kind, owner_name in pod_owners:
                owners[(template.namespace, kind, name)] = {
                    "cluster_id": cid,
                    "namespace": template.namespace,
                    "kind": kind,
                    "name": name,
                    "owner_kind": owner_kind,
                    "owner_name": owner_name,
                }
    return ClusterPods(
        segments=segments,
        owners=[owners[key] for key in sorted(owners)],
        pvcs=_pvcs(fleet, cluster, workloads),
        namespaces=[
            {
                "cluster_id": cid,
                "namespace": namespace,
                "labels": label_string(
                    {
                        "kubernetes.io/metadata.name": namespace,
                        **NAMESPACE_LABELS.get(namespace, {}),
                    }
                ),
            }
            for namespace in namespaces_for(cluster.kind, fleet.params.messiness.memory_bursts)
        ],
        lb_services=lb_services(fleet, cluster),
        omitted_owner_pods=sorted(omitted),
        bare_pods=sorted(bare),
        gpu_segments=gpu_segments,
        gpu_assignments=gpu_assignments,
    )


def _gpu_assignment(
    fleet: Fleet, cid: str, uid: int, instance: Instance, pod: str, gpu: tuple[int, str, str]
) -> list[dict]:
    """The GPU (or MIG instance) a GPU pod's segment holds; none for the device plugin."""
    index, mig_instance, profile = gpu
    if index < 0:
        return []
    pool = instance.pool
    return [
        {
            "cluster_id": cid,
            "pod_uid": uid,
            "pod": pod,
            "gpu_uuid": gpu_uuid(fleet, instance.node, index),
            "gpu_model_name": pool.gpu_model,
            "gpu_memory_capacity_mib": pool.gpu_mib,
            "gpu_max_slices": "7" if pool.mig else "",
            "mig_instance_id": mig_instance,
            "mig_profile": profile,
            "mig_strategy": "mixed" if pool.mig else "",
        }
    ]


def _scaled_out(
    fleet: Fleet, cluster: Cluster, workloads: list[Workload], autoscaled: set[int]
) -> list[Intent]:
    """The replicas a HorizontalPodAutoscaler added to the largest scaled Deployment: two
    per autoscaled node, from the node's first hour, of the rollout's second ReplicaSet."""
    scaled = [w for w in workloads if w.kind == "Deployment" and w.template.replicas is None]
    if not autoscaled or not scaled:
        return []
    workload = max(scaled, key=lambda w: (w.replicas * w.cpu_req, -w.wid))
    intents = []
    by_slot = {i.slot: i for i in fleet.cluster_instances(cluster.cluster_id) if i.autoscaled}
    for n, slot in enumerate(sorted(autoscaled)):
        start = by_slot[slot].start_h
        for k in range(2):
            replica = workload.replicas + 2 * n + k
            intents.append(Intent(workload, replica, 1, slot, start, fleet.params.hours))
    return intents


def workload_is_bare(template: Template) -> bool:
    return template.kind == "Pod"


def _run_intent(
    workload: Workload, run: int, slot: int, start: int, run_secs: int, hours: int
) -> Intent:
    span = math.ceil(run_secs / HOUR)
    end = min(hours, start + span)
    last = run_secs - (span - 1) * HOUR if start + span <= hours else HOUR
    return Intent(workload, 0, run, slot, start, end, last)


def _workloads(fleet: Fleet, cluster: Cluster, workers: list[int]) -> list[Workload]:
    params = fleet.params
    templates = templates_for(cluster.kind, params.messiness.memory_bursts)
    slots = fleet.slots(cluster.cluster_id)
    daemon_sets = [t for t in templates if t.kind == "DaemonSet"]
    long_running = [t for t in templates if t.kind in LONG_RUNNING]
    fixed = sum(t.replicas for t in long_running if t.replicas is not None)
    scaled = [t for t in long_running if t.replicas is None]
    target = max(1, params.pods_per_node - len(daemon_sets)) * len(workers)
    replicas = _apportion(max(len(scaled), target - fixed), [t.weight for t in scaled])
    counts = {t.name: t.replicas for t in long_running if t.replicas is not None}
    counts.update({t.name: n for t, n in zip(scaled, replicas, strict=True)})

    # Requests are scaled so long-running pods ask for ~60% of the workers' capacity.
    worker_cores = sum(slots[s].cores for s in workers)
    worker_mem = sum(slots[s].mem_gib * GIB for s in workers)
    ds_cores = sum(t.abs_cpu or 0 for t in daemon_sets) * len(workers)
    ds_mem = sum((t.abs_mem_mib or 0) * MIB for t in daemon_sets) * len(workers)
    cpu_units = sum(counts[t.name] * t.cpu for t in long_running if not t.no_requests)
    mem_units = sum(counts[t.name] * t.mem for t in long_running if not t.no_requests)
    cpu_scale = max(0.1 * worker_cores, REQUESTED_SHARE * worker_cores - ds_cores) / cpu_units
    mem_scale = max(0.1 * worker_mem, REQUESTED_SHARE * worker_mem - ds_mem) / mem_units

    workloads: list[Workload] = []
    for template in templates:
        if template.no_requests:
            cpu, mem = 0.0, 0
        elif template.abs_cpu is not None:
            cpu, mem = template.abs_cpu, (template.abs_mem_mib or 0) * MIB
        else:
            cpu = max(0.01, round(template.cpu * cpu_scale, 2))
            mem = max(32 * MIB, round(template.mem * mem_scale / (16 * MIB)) * 16 * MIB)
        total = counts.get(template.name, 1)
        copies = math.ceil(total / MAX_REPLICAS) if template.replicas is None else 1
        for copy in range(copies):
            count = total // copies + (1 if copy < total % copies else 0)
            name = template.name if copy == 0 else f"{template.name}-{copy + 1}"
            workloads.append(
                Workload(len(workloads), cluster.cluster_id, template, name, count, cpu, mem)
            )
    return workloads


def _apportion(total: int, weights: list[float]) -> list[int]:
    """Largest-remainder split of `total` by weight, at least 1 each."""
    if not weights:
        return []
    spare = total - len(weights)
    exact = [spare * w / sum(weights) for w in weights]
    counts = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: spare - sum(counts)]:
        counts[i] += 1
    return [c + 1 for c in counts]


def _pod_identity(
    fleet: Fleet, cluster: Cluster, intent: Intent, instance: Instance
) -> tuple[str, str, list[tuple[str, str, str, str]]]:
    """(pod name, operator label string, owner rows (kind, name, owner_kind, owner_name))."""
    rand = fleet.rand
    cid = cluster.cluster_id
    workload = intent.workload
    template = workload.template
    name = workload.name
    labels = dict(template.labels)
    suffix = rand.chars(
        5, K8S_ALPHABET, "pod", cid, name, intent.replica, intent.run, instance.node
    )
    if workload.kind == "Deployment":
        length = rand.randint(9, 10, "rs-len", cid, name, intent.run)
        rs_hash = rand.chars(length, K8S_ALPHABET, "rs", cid, name, intent.run)
        replica_set = f"{name}-{rs_hash}"
        pod = f"{replica_set}-{suffix}"
        if labels:
            labels["pod-template-hash"] = rs_hash
        owners = [
            ("Pod", pod, "ReplicaSet", replica_set),
            ("ReplicaSet", replica_set, "Deployment", name),
        ]
    elif workload.kind == "StatefulSet":
        pod = f"{name}-{intent.replica}"
        labels["controller-revision-hash"] = f"{name}-" + rand.chars(
            10, K8S_ALPHABET, "rev", cid, name
        )
        labels["statefulset.kubernetes.io/pod-name"] = pod
        owners = [("Pod", pod, "StatefulSet", name)]
    elif workload.kind == "DaemonSet":
        pod = f"{name}-{suffix}"
        labels["controller-revision-hash"] = rand.chars(10, K8S_ALPHABET, "rev", cid, name)
        labels["pod-template-generation"] = "1"
        owners = [("Pod", pod, "DaemonSet", name)]
    elif workload.kind == "Static":
        pod = f"{name}-{instance.node}"
        owners = [("Pod", pod, "Node", instance.node)]
    elif workload.kind in ("CronJob", "Job"):
        if workload.kind == "CronJob":
            scheduled = dt.datetime.combine(
                fleet.params.day(intent.run), dt.time(template.cron_hour), dt.UTC
            )
            job = f"{name}-{int(scheduled.timestamp()) // 60}"
            owners = [("Job", job, "CronJob", name)]
        else:
            job, owners = name, []
        pod = f"{job}-{suffix}"
        labels["controller-uid"] = rand.uuid("job", cid, job)
        labels["job-name"] = job
        owners = [("Pod", pod, "Job", job), *owners]
    else:
        pod, owners = name, []
    return pod, label_string(labels) if labels else "", owners


def _segment(
    uid: int, intent: Intent, instance: Instance, pod: str, labels: str, start: int, end: int
) -> dict:
    workload = intent.workload
    template = workload.template
    cpu, mem = workload.cpu_req, workload.mem_req
    return {
        "cluster_id": workload.cluster_id,
        "pod_uid": uid,
        "wid": workload.wid,
        "replica": intent.replica,
        "namespace": template.namespace,
        "pod": pod,
        "kind": workload.kind,
        "node": instance.node,
        "node_cores": instance.cores,
        "node_mem": instance.mem_bytes,
        "node_role": instance.role,
        "resource_id": instance.resource_id,
        "inst_start_h": instance.start_h,
        "inst_end_h": instance.end_h,
        "inst_first_secs": instance.first_secs,
        "inst_last_secs": instance.last_secs,
        "seg_start_h": start,
        "seg_end_h": end,
        "seg_last_secs": intent.last_secs if end == intent.end_h else HOUR,
        "cpu_req": cpu,
        "mem_req": mem,
        "cpu_lim": round(cpu * template.cpu_limit, 3) if template.cpu_limit and cpu else None,
        "mem_lim": int(mem * template.mem_limit) if template.mem_limit and mem else None,
        "cpu_base": cpu if cpu > 0 else 0.02,
        "mem_base": mem if mem > 0 else 48 * MIB,
        "util": template.util if cpu > 0 else 1.0,
        "mem_util": template.mem_util,
        "burst": template.burst,
        "mem_burst": template.mem_burst,
        "fixed_cpu": round(0.55 * instance.cores, 3) if template.stress else None,
        "fixed_mem": round(0.5 * instance.mem_bytes) if template.mem_stress else None,
        "labels": labels,
    }


def _pvcs(fleet: Fleet, cluster: Cluster, workloads: list[Workload]) -> list[dict]:
    rand = fleet.rand
    cid = cluster.cluster_id
    claims: list[tuple[Workload, str, int, int | None]] = []
    for workload in workloads:
        template = workload.template
        if template.pvc_gib:
            for replica in range(workload.replicas):
                claims.append(
                    (workload, f"data-{workload.name}-{replica}", template.pvc_gib, replica)
                )
        if template.shared_pvc and workload.name == template.name:
            claim, size = template.shared_pvc
            claims.append((workload, claim, size, None))
    released_claim, released_h = None, None
    released = fleet.irregular.released_volume
    if released and released[0] == cid:
        # the first claim is deleted; a cluster without claims skips the irregularity
        released_claim = claims[0][1] if claims else None
        released_h = released[2] * 24
        fleet.irregular.released_volume = (cid, released_claim, released[2]) if claims else None
    rows = []
    for workload, claim, size, replica in claims:
        pv = "pvc-" + rand.uuid("pv", cid, claim)
        driver, storage_class, handle, pv_labels = _volume_identity(fleet, cluster, pv, claim)
        app = workload.template.labels.get("app") or workload.template.labels.get(
            "app.kubernetes.io/name", workload.name
        )
        rows.append(
            {
                "cluster_id": cid,
                "namespace": workload.template.namespace,
                "pvc": claim,
                "pv": pv,
                "storageclass": storage_class,
                "csi_driver": driver,
                "csi_volume_handle": handle,
                "capacity_bytes": size * GIB,
                "size_gib": size,
                "mount_wid": workload.wid,
                "mount_replica": replica,
                "used_share": round(0.2 + 0.6 * rand.unit("pv-used", cid, claim), 4),
                "pv_labels": label_string(pv_labels),
                "pvc_labels": label_string({"app": app}),
                "released_h": released_h if claim == released_claim else None,
            }
        )
    return rows


def _volume_identity(
    fleet: Fleet, cluster: Cluster, pv: str, claim: str
) -> tuple[str, str, str, dict[str, str]]:
    """(csi_driver, storageclass, csi_volume_handle, PV labels) as each cloud's CSI driver."""
    rand = fleet.rand
    if cluster.kind == "eks":
        volume = "vol-0" + rand.hex(16, "ebs", cluster.cluster_id, claim)
        return "ebs.csi.aws.com", "gp3", volume, {"topology.kubernetes.io/zone": "us-east-1a"}
    if cluster.kind == "gke":
        handle = f"projects/{cluster.accounts.gcp_project}/zones/{GCP_ZONE}/disks/{pv}"
        return (
            "pd.csi.storage.gke.io",
            "standard-rwo",
            handle,
            {"topology.kubernetes.io/zone": GCP_ZONE},
        )
    if cluster.kind == "aks":
        handle = (
            f"/subscriptions/{cluster.accounts.azure_subscription}/resourceGroups/"
            f"{cluster.resource_group.lower()}/providers/Microsoft.Compute/disks/{pv}"
        )
        return (
            "disk.csi.azure.com",
            "managed-csi",
            handle,
            {"topology.kubernetes.io/zone": "eastus-1"},
        )
    handle = "0001-0009-rook-ceph-0000000000000001-" + rand.uuid("ceph", cluster.cluster_id, claim)
    return "rbd.csi.ceph.com", "ceph-rbd", handle, {"storage-tier": "ceph-ssd"}


def lb_services(fleet: Fleet, cluster: Cluster) -> list[dict]:
    """LoadBalancer Services and the ID the bill shows for their load balancer.

    On AKS every LoadBalancer Service is a frontend IP of the cluster's one `kubernetes`
    load balancer, so with Messiness.shared_load_balancer three Services report one ID."""
    rand = fleet.rand
    cid = cluster.cluster_id
    accounts = cluster.accounts
    rows: list[tuple[str, str, str]] = []
    if cluster.kind == "eks":
        for namespace, service in (
            ("ingress-nginx", "ingress-nginx-controller"),
            ("web", "frontend"),
        ):
            name = "a" + rand.hex(31, "elb-name", cid, service)
            arn = (
                f"arn:aws:elasticloadbalancing:us-east-1:{accounts.aws_account}:loadbalancer/net/"
                f"{name}/{rand.hex(16, 'elb-id', cid, service)}"
            )
            rows.append((namespace, service, arn))
    elif cluster.kind == "aks":
        lb = (
            f"/subscriptions/{accounts.azure_subscription}/resourceGroups/"
            f"{cluster.resource_group.lower()}/providers/Microsoft.Network/loadBalancers/kubernetes"
        )
        rows.append(("web", "frontend", lb))
        if fleet.irregular.shared_load_balancer == cid:
            rows.append(("ingress-nginx", "ingress-nginx-controller", lb))
            rows.append(("checkout", "checkout-api", lb))
    elif cluster.kind == "onprem":
        address, attempt = "10.20.0.50", 0
        while cluster.prefix and (attempt == 0 or address in fleet.used_names):
            octets = [rand.randint(0, 255, "lb-ip", cid, attempt, n) for n in range(3)]
            address = f"10.{octets[0]}.{octets[1]}.{octets[2]}"
            attempt += 1
        fleet.used_names.add(address)
        rows.append(("openshift-ingress", "router-default", address))
    return [
        {"cluster_id": cid, "namespace": ns, "service": svc, "load_balancer_id": lb}
        for ns, svc, lb in rows
    ]
