"""Load the fleet model into DuckDB: hours, instances, node-hours, node-days, pod segments,
claims, namespaces. The per-hour report rows and the bills are SQL over these."""

from __future__ import annotations

import pyarrow as pa

from kubeledger.generate.context import Context, sql_str
from kubeledger.generate.pods import ClusterPods

INSTANCES = pa.schema(
    [
        ("cluster_id", pa.string()),
        ("provider", pa.string()),
        ("slot", pa.int32()),
        ("gen", pa.int32()),
        ("node", pa.string()),
        ("pool_name", pa.string()),
        ("role", pa.string()),
        ("purchase", pa.string()),
        ("instance_type", pa.string()),
        ("cores", pa.int32()),
        ("mem_gib", pa.int32()),
        ("mem_bytes", pa.int64()),
        ("zone", pa.string()),
        ("provider_id", pa.string()),
        ("resource_id", pa.string()),
        ("start_h", pa.int32()),
        ("end_h", pa.int32()),
        ("first_secs", pa.int32()),
        ("last_secs", pa.int32()),
        ("labels", pa.string()),
        ("scale_set", pa.string()),
        ("vm_index", pa.int32()),
        ("gce_id", pa.string()),
        ("autoscaled", pa.bool_()),
    ]
)

SEGMENTS = pa.schema(
    [
        ("cluster_id", pa.string()),
        ("pod_uid", pa.int64()),
        ("wid", pa.int32()),
        ("replica", pa.int32()),
        ("namespace", pa.string()),
        ("pod", pa.string()),
        ("kind", pa.string()),
        ("node", pa.string()),
        ("node_cores", pa.int32()),
        ("node_mem", pa.int64()),
        ("node_role", pa.string()),
        ("resource_id", pa.string()),
        ("inst_start_h", pa.int32()),
        ("inst_end_h", pa.int32()),
        ("inst_first_secs", pa.int32()),
        ("inst_last_secs", pa.int32()),
        ("seg_start_h", pa.int32()),
        ("seg_end_h", pa.int32()),
        ("seg_last_secs", pa.int32()),
        ("cpu_req", pa.float64()),
        ("mem_req", pa.int64()),
        ("cpu_lim", pa.float64()),
        ("mem_lim", pa.int64()),
        ("cpu_base", pa.float64()),
        ("mem_base", pa.float64()),
        ("util", pa.float64()),
        ("mem_util", pa.float64()),
        ("burst", pa.float64()),
        ("mem_burst", pa.float64()),
        ("fixed_cpu", pa.float64()),
        ("fixed_mem", pa.float64()),
        ("labels", pa.string()),
    ]
)

PVCS = pa.schema(
    [
        ("cluster_id", pa.string()),
        ("namespace", pa.string()),
        ("pvc", pa.string()),
        ("pv", pa.string()),
        ("storageclass", pa.string()),
        ("csi_driver", pa.string()),
        ("csi_volume_handle", pa.string()),
        ("capacity_bytes", pa.int64()),
        ("size_gib", pa.int32()),
        ("mount_wid", pa.int32()),
        ("mount_replica", pa.int32()),
        ("used_share", pa.float64()),
        ("pv_labels", pa.string()),
        ("pvc_labels", pa.string()),
        ("released_h", pa.int32()),
    ]
)

NAMESPACES = pa.schema(
    [("cluster_id", pa.string()), ("namespace", pa.string()), ("labels", pa.string())]
)

OWNERS = pa.schema(
    [
        ("cluster_id", pa.string()),
        ("namespace", pa.string()),
        ("kind", pa.string()),
        ("name", pa.string()),
        ("owner_kind", pa.string()),
        ("owner_name", pa.string()),
    ]
)

GPU_ASSIGNMENTS = pa.schema(
    [
        ("cluster_id", pa.string()),
        ("pod_uid", pa.int64()),
        ("pod", pa.string()),
        ("gpu_uuid", pa.string()),
        ("gpu_model_name", pa.string()),
        ("gpu_memory_capacity_mib", pa.int64()),
        ("gpu_max_slices", pa.string()),
        ("mig_instance_id", pa.string()),
        ("mig_profile", pa.string()),
        ("mig_strategy", pa.string()),
    ]
)

LB_SERVICES = pa.schema(
    [
        ("cluster_id", pa.string()),
        ("namespace", pa.string()),
        ("service", pa.string()),
        ("load_balancer_id", pa.string()),
    ]
)


def load_tables(ctx: Context, pods: list[ClusterPods]) -> None:
    params = ctx.fleet.params
    con = ctx.con
    start = sql_str(params.start_date.isoformat())
    con.execute(
        f"""
        create or replace table hours as
        with base as (
            select
                range::integer as h,
                (range // 24)::integer as day_idx,
                (range % 24)::integer as hod,
                timestamp {start} + to_hours(range) as ts
            from range({params.hours})
        )
        select
            h,
            day_idx,
            hod,
            cast(ts as date) as usage_date,
            strftime(ts, '%Y-%m-%d %H:%M:%S +0000 UTC') as interval_start,
            strftime(ts + interval 3599 second, '%Y-%m-%d %H:%M:%S +0000 UTC') as interval_end,
            strftime(date_trunc('month', ts), '%Y-%m-%d %H:%M:%S +0000 UTC') as rp_start,
            strftime(date_trunc('month', ts) + interval 1 month, '%Y-%m-%d %H:%M:%S +0000 UTC')
                as rp_end
        from base
        """
    )
    providers = {c.cluster_id: c.provider for c in ctx.fleet.clusters}
    ctx.table(
        "instances",
        [
            {
                "cluster_id": i.cluster_id,
                "provider": providers[i.cluster_id],
                "slot": i.slot,
                "gen": i.gen,
                "node": i.node,
                "pool_name": i.pool.name,
                "role": i.role,
                "purchase": i.purchase,
                "instance_type": i.pool.instance_type,
                "cores": i.cores,
                "mem_gib": i.pool.mem_gib,
                "mem_bytes": i.mem_bytes,
                "zone": i.zone,
                "provider_id": i.provider_id,
                "resource_id": i.resource_id,
                "start_h": i.start_h,
                "end_h": i.end_h,
                "first_secs": i.first_secs,
                "last_secs": i.last_secs,
                "labels": i.labels,
                "scale_set": i.scale_set,
                "vm_index": i.vm_index,
                "gce_id": i.gce_id,
                "autoscaled": i.autoscaled,
            }
            for i in ctx.fleet.instances
        ],
        INSTANCES,
    )
    con.execute(
        """
        create or replace table node_hours as
        with expanded as (
            select *, unnest(range(start_h, end_h))::integer as h from instances
        )
        select
            *,
            case
                when h = start_h then first_secs
                when h = end_h - 1 then last_secs
                else 3600
            end as secs
        from expanded
        """
    )
    con.execute(
        """
        create or replace table node_days as
        select
            node_hours.cluster_id, node_hours.provider, node_hours.slot, node_hours.gen,
            node_hours.node, node_hours.pool_name, node_hours.role, node_hours.purchase,
            node_hours.instance_type, node_hours.cores, node_hours.mem_gib, node_hours.zone,
            node_hours.resource_id, node_hours.scale_set, node_hours.vm_index,
            node_hours.gce_id, hours.day_idx, hours.usage_date,
            sum(node_hours.secs) / 3600.0 as hours
        from node_hours
        inner join hours on hours.h = node_hours.h
        group by all
        """
    )
    # The days each cluster exists, from its first node's day to its last node's: its disks,
    # load balancers and control-plane fee are billed on every one of them, also on the days
    # it has no node (scaled to zero).
    con.execute(
        """
        create or replace table cluster_days as
        with spans as (
            select cluster_id, provider, min(start_h) // 24 as first_day,
                   (max(end_h) - 1) // 24 as last_day
            from instances
            group by all
        ),
        days as (select distinct day_idx, usage_date from hours)
        select spans.cluster_id, spans.provider, days.day_idx, days.usage_date
        from spans
        inner join days on days.day_idx between spans.first_day and spans.last_day
        order by spans.cluster_id, days.day_idx
        """
    )
    # The pod report streams rows in this order (no sort at write time).
    segments = sorted(
        (row for p in pods for row in p.segments + p.gpu_segments),
        key=lambda r: (r["cluster_id"], r["node"], r["namespace"], r["pod"], r["seg_start_h"]),
    )
    ctx.table("segments", segments, SEGMENTS)
    ctx.table("pvcs", [row for p in pods for row in p.pvcs], PVCS)
    ctx.table("namespaces", [row for p in pods for row in p.namespaces], NAMESPACES)
    ctx.table("owners", [row for p in pods for row in p.owners], OWNERS)
    ctx.table("lb_services", [row for p in pods for row in p.lb_services], LB_SERVICES)
    ctx.table("gpu_assignments", [row for p in pods for row in p.gpu_assignments], GPU_ASSIGNMENTS)
