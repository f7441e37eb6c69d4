{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day, namespace, pod and platform status: the pod's compute cost over
-- the hours it ran that day (SPEC §5), its share of the volumes it mounted, and the usage
-- behind them. Platform is decided per pod-hour (a platform namespace, or a control-plane /
-- infra node), so a pod that spent some hours on an infra node has a platform row for those
-- hours and a user row for the rest; its storage is split between the two by their hours.
-- Costs are summed exactly (`exact_sum`), so they do not depend on the order rows are added.
with

pod_hours as (
    select
        cluster_id,
        usage_date,
        interval_start,
        node,
        namespace,
        pod,
        cpu_usage_core_seconds,
        cpu_request_core_seconds,
        memory_usage_byte_seconds,
        memory_request_byte_seconds,
        cpu_cost,
        cpu_used_cost,
        memory_cost,
        memory_used_cost,
        gpu_seconds,
        gpu_cost,
        gpu_used_cost,
        is_cpu_overcommitted,
        is_memory_overcommitted,
        is_platform
    from {{ ref('int_pod_hours_allocated') }}
    where {{ day_range_filter('usage_date') }}
),

pod_storage as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        {{ exact_sum('storage_cost') }} as storage_cost
    from {{ ref('int_volume_costs_split_daily') }}
    where pod is not null and {{ day_range_filter('usage_date') }}
    group by cluster_id, usage_date, namespace, pod
),

daily as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        is_platform,
        count(*) as pod_hours,
        sum(cpu_usage_core_seconds) as cpu_usage_core_seconds,
        sum(cpu_request_core_seconds) as cpu_request_core_seconds,
        sum(memory_usage_byte_seconds) as memory_usage_byte_seconds,
        sum(memory_request_byte_seconds) as memory_request_byte_seconds,
        {{ exact_sum('cpu_cost') }} as cpu_cost,
        {{ exact_sum('cpu_used_cost') }} as cpu_used_cost,
        {{ exact_sum('memory_cost') }} as memory_cost,
        {{ exact_sum('memory_used_cost') }} as memory_used_cost,
        {{ exact_sum('gpu_seconds') }} as gpu_seconds,
        {{ exact_sum('gpu_cost') }} as gpu_cost,
        {{ exact_sum('gpu_used_cost') }} as gpu_used_cost,
        sum(case when is_cpu_overcommitted or is_memory_overcommitted then 1 else 0 end)
            as overcommitted_hours,
        -- the row's node: the node of its last hour (ties: the first node by name), the
        -- least of (seconds before 2100, node) in the same grouped aggregate, rather than a
        -- join of the last hours back to every pod-hour
        min({{ ordered_struct([
            ('seconds_before_2100', dbt.datediff(
                'interval_start', "cast('2100-01-01 00:00:00' as timestamp)", 'second'
            )),
            ('node', 'node'),
        ]) }}) as last_hour
    from pod_hours
    group by cluster_id, usage_date, namespace, pod, is_platform
),

with_day_hours as (
    select
        *,
        sum(pod_hours) over (partition by cluster_id, usage_date, namespace, pod)
            as pod_day_hours,
        sum(case when is_platform then pod_hours else 0 end)
            over (partition by cluster_id, usage_date, namespace, pod) as platform_hours
    from daily
),

final as (
    select
        with_day_hours.cluster_id,
        with_day_hours.usage_date,
        with_day_hours.namespace,
        with_day_hours.pod,
        with_day_hours.is_platform,
        with_day_hours.last_hour.node as node,  -- noqa: AL09,RF01
        with_day_hours.pod_hours,
        with_day_hours.cpu_usage_core_seconds,
        with_day_hours.cpu_request_core_seconds,
        with_day_hours.memory_usage_byte_seconds,
        with_day_hours.memory_request_byte_seconds,
        with_day_hours.cpu_cost,
        with_day_hours.cpu_used_cost,
        with_day_hours.memory_cost,
        with_day_hours.memory_used_cost,
        with_day_hours.gpu_seconds,
        with_day_hours.gpu_cost,
        with_day_hours.gpu_used_cost,
        -- the platform row takes storage × platform hours / hours, the user row the rest
        case
            when with_day_hours.pod_hours = with_day_hours.pod_day_hours
                then coalesce(pod_storage.storage_cost, 0)
            when with_day_hours.is_platform
                then
                    coalesce(pod_storage.storage_cost, 0)
                    * with_day_hours.platform_hours / with_day_hours.pod_day_hours
            else
                coalesce(pod_storage.storage_cost, 0)
                - coalesce(pod_storage.storage_cost, 0)
                * with_day_hours.platform_hours / with_day_hours.pod_day_hours
        end as storage_cost,
        with_day_hours.overcommitted_hours
    from with_day_hours
    left join pod_storage
        on
            with_day_hours.cluster_id = pod_storage.cluster_id
            and with_day_hours.usage_date = pod_storage.usage_date
            and with_day_hours.namespace = pod_storage.namespace
            and with_day_hours.pod = pod_storage.pod
)

select * from final
