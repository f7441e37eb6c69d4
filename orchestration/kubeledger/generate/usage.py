"""The cluster agent's files: koku-metrics-operator daily reports and manifests, plus the
project's supplementary nodes / owners / load-balancer-services CSVs."""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
from pathlib import Path

from kubeledger.generate.context import Context, sql_str
from kubeledger.generate.fleet import Cluster
from kubeledger.generate.gpus import gpu_report_sql

OPERATOR_VERSION = "4.0.0"
REPORT_SUFFIXES = ("pod", "storage", "node_labels", "namespace_labels")


# One job writes a cluster's reports for a run of days at once, one query per report (the
# files of each day split off by DuckDB's partitioned COPY): about this many pod-hours per job,
# so a small cluster's month is one job and a big cluster's a few days, and the generator's
# memory does not grow with the month. Per-day queries cost ~30 ms a cluster-day in statement
# overhead alone: most of a small fleet's generation.
CHUNK_POD_HOURS = 2_000_000
STAMP_FORMAT = "'%Y-%m-%d %H:%M:%S +0000 UTC'"
# the day's usage curve by hour of day (index hour + 1), as decimal literals
DIURNAL = (
    "["
    + ", ".join(f"{0.8 + 0.3 * math.cos(2 * math.pi * (n - 15) / 24):.6f}" for n in range(24))
    + "]"
)


def _span(days: list[int]) -> tuple[int, int]:
    """The hours [lo, hi) from the first day's midnight to the end of the last day."""
    return days[0] * 24, days[-1] * 24 + 24


def _on_days(days: list[int], hour: str) -> str:
    """SQL: hour `hour` falls on one of `days` (a run of days may skip the silent ones)."""
    return f"{hour} // 24 in ({', '.join(str(day) for day in days)})"


def _reported(ctx: Context, cluster: Cluster, days: list[int], hour: str, node: str) -> str:
    """SQL: the agent reported this node-hour: it falls on one of `days` and is not the
    silent node's day (billed, not reported)."""
    condition = _on_days(days, hour)
    silent = ctx.fleet.irregular.silent_node
    if silent and silent[0] == cluster.cluster_id and silent[2] in days:
        condition += f" and not ({node} = {sql_str(silent[1])} and {hour} // 24 = {silent[2]})"
    return condition


def pod_report_sql(ctx: Context, cluster: Cluster, days: list[int]) -> str:
    """One row per pod per hour it ran on `days`; usage from hashes of (seed, pod, hour);
    `report_day` is the file the row goes to.

    No ORDER BY: rows follow the segments table (sorted by node, namespace, pod) and then
    the hour, which DuckDB preserves (preserve_insertion_order), so each day's rows come out
    deterministic without a sort of millions of rows.
    """
    lo, hi = _span(days)
    start = sql_str(ctx.fleet.params.start_date.isoformat())
    role_column = "" if cluster.kind == "onprem" else "node_role,"
    return f"""
        with seg as (
            select * from segments
            where cluster_id = {sql_str(cluster.cluster_id)}
              and seg_start_h < {hi} and seg_end_h > {lo}
        ),
        expanded as (
            select *, unnest(range(greatest(seg_start_h, {lo}), least(seg_end_h, {hi}))) as h
            from seg
        ),
        kept as (
            select *, timestamp {start} + to_hours(h) as hour_start
            from expanded
            where {_reported(ctx, cluster, days, "h", "node")}
        ),
        timed as (
            select
                *,
                strftime(hour_start, {STAMP_FORMAT}) as interval_start,
                strftime(hour_start + interval 3599 second, {STAMP_FORMAT}) as interval_end,
                strftime(date_trunc('month', hour_start), {STAMP_FORMAT}) as rp_start,
                strftime(date_trunc('month', hour_start) + interval 1 month, {STAMP_FORMAT})
                    as rp_end,
                {DIURNAL}[h % 24 + 1] as diurnal,
                case
                    when h = inst_start_h then inst_first_secs
                    when h = inst_end_h - 1 then inst_last_secs
                    else 3600
                end as node_secs,
                hash({ctx.seed}, pod_uid, h) as rnd
            from kept
        ),
        sized as (
            select
                *,
                case when h = seg_end_h - 1 then least(node_secs, seg_last_secs)
                     else node_secs end as secs,
                (rnd & 65535) / 65536.0 as r1,
                ((rnd >> 16) & 65535) / 65536.0 as r2,
                ((rnd >> 32) & 65535) / 65536.0 as r3,
                ((rnd >> 48) & 65535) / 65536.0 as r4
            from timed
        ),
        used as (
            select
                *,
                least(
                    coalesce(cpu_lim, node_cores), node_cores,
                    case
                        when fixed_cpu is not null then fixed_cpu * (0.95 + 0.1 * r1)
                        when r2 < burst then cpu_base * (1.2 + 1.3 * r3)
                        else cpu_base * util * diurnal * (0.6 + 0.8 * r1)
                    end
                ) as cpu_cores,
                least(
                    coalesce(mem_lim, node_mem),
                    case
                        when fixed_mem is not null then fixed_mem * (0.95 + 0.1 * r4)
                        when r4 < mem_burst then mem_base * (1.05 + 0.3 * r3)
                        else mem_base * mem_util * (0.9 + 0.2 * r4)
                    end
                ) as mem_bytes
            from sized
        )
        select
            rp_start as report_period_start,
            rp_end as report_period_end,
            interval_start,
            interval_end,
            node,
            namespace,
            pod,
            round(cpu_cores * secs, 3) as pod_usage_cpu_core_seconds,
            round(cpu_req * secs, 3) as pod_request_cpu_core_seconds,
            round(cpu_lim * secs, 3) as pod_limit_cpu_core_seconds,
            cast(round(mem_bytes * secs) as bigint) as pod_usage_memory_byte_seconds,
            mem_req * secs as pod_request_memory_byte_seconds,
            mem_lim * secs as pod_limit_memory_byte_seconds,
            node_cores as node_capacity_cpu_cores,
            node_cores * node_secs as node_capacity_cpu_core_seconds,
            node_mem as node_capacity_memory_bytes,
            node_mem * node_secs as node_capacity_memory_byte_seconds,
            {role_column}
            nullif(resource_id, '') as resource_id,
            nullif(labels, '') as pod_labels,
            h // 24 as report_day
        from used
    """


def storage_report_sql(ctx: Context, cluster: Cluster, days: list[int]) -> str:
    """One row per claim per pod-hour mounting it; pod '' when no pod mounted it. A released
    claim (deleted, its volume kept) has no rows from its release on."""
    cid = sql_str(cluster.cluster_id)
    total = ctx.fleet.params.hours
    lo, hi = _span(days)
    return f"""
        with claims as (select * from pvcs where cluster_id = {cid}),
        mounted_hours as (
            select
                claims.pvc, segments.pod, segments.node,
                unnest(range(greatest(segments.seg_start_h, {lo}),
                             least(segments.seg_end_h, {hi}))) as h
            from claims
            inner join segments
                on segments.cluster_id = claims.cluster_id
                and segments.wid = claims.mount_wid
                and (claims.mount_replica is null or segments.replica = claims.mount_replica)
            where segments.seg_start_h < {hi} and segments.seg_end_h > {lo}
        ),
        mounted as (
            select * from mounted_hours
            where {_reported(ctx, cluster, days, "h", "node")}
        ),
        grid as (
            select claims.*, hours.*
            from claims
            cross join hours
            where hours.h >= {lo} and hours.h < {hi} and {_on_days(days, "hours.h")}
                and (claims.released_h is null or hours.h < claims.released_h)
        )
        select
            grid.rp_start as report_period_start,
            grid.rp_end as report_period_end,
            grid.interval_start,
            grid.interval_end,
            grid.namespace,
            mounted.pod,
            mounted.node,
            grid.pvc as persistentvolumeclaim,
            grid.pv as persistentvolume,
            grid.storageclass,
            grid.csi_driver,
            grid.csi_volume_handle,
            grid.capacity_bytes as persistentvolumeclaim_capacity_bytes,
            grid.capacity_bytes * 3600 as persistentvolumeclaim_capacity_byte_seconds,
            grid.capacity_bytes * 3600 as volume_request_storage_byte_seconds,
            cast(round(grid.capacity_bytes * 3600.0
                       * least(0.98, grid.used_share + 0.1 * grid.h / {total})) as bigint)
                as persistentvolumeclaim_usage_byte_seconds,
            grid.pv_labels as persistentvolume_labels,
            grid.pvc_labels as persistentvolumeclaim_labels,
            grid.day_idx as report_day
        from grid
        left join mounted on mounted.pvc = grid.pvc and mounted.h = grid.h
        order by grid.h, grid.namespace, grid.pvc, pod, node
    """


def node_labels_sql(ctx: Context, cluster: Cluster, days: list[int]) -> str:
    lo, hi = _span(days)
    return f"""
        select
            hours.rp_start as report_period_start,
            hours.rp_end as report_period_end,
            hours.interval_start,
            hours.interval_end,
            node_hours.node,
            node_hours.labels as node_labels,
            hours.day_idx as report_day
        from node_hours
        inner join hours on hours.h = node_hours.h
        where node_hours.cluster_id = {sql_str(cluster.cluster_id)}
          and node_hours.h >= {lo} and node_hours.h < {hi}
          and {_reported(ctx, cluster, days, "node_hours.h", "node_hours.node")}
        order by node_hours.h, node_hours.node
    """


def namespace_labels_sql(cluster: Cluster, days: list[int]) -> str:
    lo, hi = _span(days)
    return f"""
        select
            hours.rp_start as report_period_start,
            hours.rp_end as report_period_end,
            hours.interval_start,
            hours.interval_end,
            namespaces.namespace,
            namespaces.labels as namespace_labels,
            hours.day_idx as report_day
        from namespaces
        cross join hours
        where namespaces.cluster_id = {sql_str(cluster.cluster_id)}
          and hours.h >= {lo} and hours.h < {hi} and {_on_days(days, "hours.h")}
        order by hours.h, namespaces.namespace
    """


def usage_jobs(ctx: Context, cluster: Cluster, gzip_usage: bool = False) -> list:
    """Jobs writing every day's four reports and manifest, a run of days each (about
    CHUNK_POD_HOURS pod-hours). No reports on the days the agent sent nothing (the cluster
    had no nodes, or the agent was down)."""
    params = ctx.fleet.params
    silent = ctx.fleet.irregular.silent_days(cluster.cluster_id)
    days = [
        day for day in range(params.days) if day not in silent and _cluster_ran(ctx, cluster, day)
    ]
    pod_hours = (
        ctx.cursor()
        .execute(
            "select coalesce(sum(seg_end_h - seg_start_h), 0) from segments where cluster_id = ?",
            [cluster.cluster_id],
        )
        .fetchone()[0]
    )
    size = max(1, CHUNK_POD_HOURS * params.days // max(1, pod_hours))
    return [
        lambda chunk=days[first : first + size]: _write_usage_days(ctx, cluster, chunk, gzip_usage)
        for first in range(0, len(days), size)
    ]


def _cluster_ran(ctx: Context, cluster: Cluster, day: int) -> bool:
    """Whether any node of the cluster ran that day (after decommissioning none does)."""
    return any(
        i.start_h < day * 24 + 24 and i.end_h > day * 24
        for i in ctx.fleet.cluster_instances(cluster.cluster_id)
    )


def _write_usage_days(ctx: Context, cluster: Cluster, days: list[int], gzip_usage: bool) -> None:
    """The reports of `days`: one query per report, split into each day's file."""
    params = ctx.fleet.params
    cid = cluster.cluster_id
    ext = ".csv.gz" if gzip_usage else ".csv"
    options = "format csv, header" + (", compression gzip" if gzip_usage else "")
    uuids = {day: ctx.fleet.rand.uuid("manifest", cid, params.day(day).isoformat()) for day in days}
    folders = {day: ctx.landing / "usage" / cid / params.day(day).isoformat() for day in days}
    cursor = ctx.cursor()
    pods = f"pod_rows_{cid.replace('-', '_')}_{days[0]}"
    cursor.execute(f"create or replace temp table {pods} as {pod_report_sql(ctx, cluster, days)}")
    _count_overcommitted(ctx, pods)
    queries = (
        f"select * from {pods}",
        storage_report_sql(ctx, cluster, days),
        node_labels_sql(ctx, cluster, days),
        namespace_labels_sql(cluster, days),
    )
    reports = list(zip(REPORT_SUFFIXES, queries, strict=True))
    if _has_gpu_pods(ctx, cluster):
        # the operator's GPU report, a fifth file of the day's package
        lo, hi = _span(days)
        reported = _reported(ctx, cluster, days, "h", "node")
        reports.append(("gpu", gpu_report_sql(ctx, cluster, lo, hi, reported)))
    scratch = ctx.out_dir / ".generating" / f"{cid}-{days[0]}"
    for number, (kind, query) in enumerate(reports):
        ctx.copy_by_day(
            query,
            scratch / kind,
            f"koku_{kind}",
            options,
            {
                day: folders[day] / f"{uuids[day]}_openshift_usage_report.{number}{ext}"
                for day in days
            },
        )
    cursor.execute(f"drop table {pods}")
    shutil.rmtree(scratch)
    for day in days:
        _write_manifest(ctx, cluster, day, uuids[day], folders[day], len(reports), ext)


def _write_manifest(
    ctx: Context,
    cluster: Cluster,
    day: int,
    uuid: str,
    folder: Path,
    files: int,
    ext: str,
) -> None:
    start = dt.datetime.combine(ctx.fleet.params.day(day), dt.time(), dt.UTC)
    manifest = {
        "uuid": uuid,
        "cluster_id": cluster.cluster_id,
        "version": OPERATOR_VERSION,
        "date": (start + dt.timedelta(days=1, minutes=7)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "files": [f"{uuid}_openshift_usage_report.{n}{ext}" for n in range(files)],
        "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end": (start + dt.timedelta(hours=23, minutes=59, seconds=59)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "certified": False,
    }
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    ctx.note(path, "manifest", 1)


def _has_gpu_pods(ctx: Context, cluster: Cluster) -> bool:
    return any(i.pool.gpus for i in ctx.fleet.cluster_instances(cluster.cluster_id))


def _count_overcommitted(ctx: Context, pods: str) -> None:
    """Node-hours whose claims, max(request, usage), sum past the capacity (SPEC §5)."""
    cpu, memory = (
        ctx.cursor()
        .execute(
            f"""
            with node_hours as (
                select
                    sum(greatest(pod_usage_cpu_core_seconds,
                                 coalesce(pod_request_cpu_core_seconds, 0)))
                        > any_value(node_capacity_cpu_core_seconds) as cpu,
                    sum(greatest(pod_usage_memory_byte_seconds,
                                 coalesce(pod_request_memory_byte_seconds, 0)))
                        > any_value(node_capacity_memory_byte_seconds) as memory
                from {pods}
                group by node, interval_start
            )
            select count(*) filter (where cpu), count(*) filter (where memory) from node_hours
            """
        )
        .fetchone()
    )
    with ctx._lock:
        ctx.overcommitted["cpu"] += cpu
        ctx.overcommitted["memory"] += memory


def write_supplementary(ctx: Context, cluster: Cluster) -> None:
    cid = sql_str(cluster.cluster_id)
    folder = ctx.landing / "cluster" / cluster.cluster_id
    start = f"timestamp '{ctx.fleet.params.start_date}'"
    first_seen = f"{start} + to_hours(start_h) + to_seconds(3600 - first_secs)"
    last_seen = f"{start} + to_hours(end_h - 1) + to_seconds(last_secs)"
    if ctx.fleet.params.messiness.offset_timestamps:
        # the same instants, written in the data center's Central European time
        seen = [f"iso_in_zone({ts}, 'Europe/Berlin')" for ts in (first_seen, last_seen)]
    else:
        seen = [f"strftime({ts}, '%Y-%m-%dT%H:%M:%SZ')" for ts in (first_seen, last_seen)]
    ctx.copy(
        f"""
        select
            cluster_id,
            node,
            nullif(provider_id, '') as provider_id,
            {seen[0]} as first_seen,
            {seen[1]} as last_seen
        from instances
        where cluster_id = {cid}
        order by slot, gen
        """,
        folder / "nodes.csv",
        "cluster_nodes",
    )
    ctx.copy(
        f"""
        select cluster_id, namespace, kind, name, owner_kind, owner_name
        from owners where cluster_id = {cid}
        order by namespace, kind, name
        """,
        folder / "owners.csv",
        "cluster_owners",
    )
    services = ctx.cursor().execute(f"select count(*) from lb_services where cluster_id = {cid}")
    if not services.fetchone()[0]:
        return
    ctx.copy(
        f"""
        select cluster_id, namespace, service, load_balancer_id
        from lb_services where cluster_id = {cid}
        order by namespace, service
        """,
        folder / "lb_services.csv",
        "cluster_lb_services",
    )
