{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day, namespace and pod: the pod's compute cost over the hours it ran
-- that day (SPEC §5), its share of the volumes it mounted, and the usage behind them. A pod is
-- platform when its namespace is a platform namespace or it ran on a platform node.
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
        is_cpu_overcommitted,
        is_memory_overcommitted,
        is_on_platform_node,
        is_platform_namespace
    from {{ ref('int_pod_hours_allocated') }}
    where {{ day_range_filter('usage_date') }}
),

pod_storage as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        sum(storage_cost) as storage_cost
    from {{ ref('int_volume_costs_split_daily') }}
    where pod is not null and {{ day_range_filter('usage_date') }}
    group by cluster_id, usage_date, namespace, pod
),

-- A pod's node for the day is the node of its last hour (ties: the first node by name),
-- found with grouped aggregates rather than a window sorting every pod-hour.
pod_last_hours as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        max(interval_start) as interval_start
    from pod_hours
    group by cluster_id, usage_date, namespace, pod
),

last_hour as (
    select
        pod_hours.cluster_id,
        pod_hours.usage_date,
        pod_hours.namespace,
        pod_hours.pod,
        min(pod_hours.node) as node
    from pod_hours
    inner join pod_last_hours
        on
            pod_hours.cluster_id = pod_last_hours.cluster_id
            and pod_hours.usage_date = pod_last_hours.usage_date
            and pod_hours.namespace = pod_last_hours.namespace
            and pod_hours.pod = pod_last_hours.pod
            and pod_hours.interval_start = pod_last_hours.interval_start
    group by pod_hours.cluster_id, pod_hours.usage_date, pod_hours.namespace, pod_hours.pod
),

daily as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        count(*) as pod_hours,
        sum(cpu_usage_core_seconds) as cpu_usage_core_seconds,
        sum(cpu_request_core_seconds) as cpu_request_core_seconds,
        sum(memory_usage_byte_seconds) as memory_usage_byte_seconds,
        sum(memory_request_byte_seconds) as memory_request_byte_seconds,
        sum(cpu_cost) as cpu_cost,
        sum(cpu_used_cost) as cpu_used_cost,
        sum(memory_cost) as memory_cost,
        sum(memory_used_cost) as memory_used_cost,
        sum(case when is_cpu_overcommitted or is_memory_overcommitted then 1 else 0 end)
            as overcommitted_hours,
        max(case when is_on_platform_node or is_platform_namespace then 1 else 0 end) = 1
            as is_platform
    from pod_hours
    group by cluster_id, usage_date, namespace, pod
),

final as (
    select
        daily.cluster_id,
        daily.usage_date,
        daily.namespace,
        daily.pod,
        last_hour.node,
        daily.pod_hours,
        daily.cpu_usage_core_seconds,
        daily.cpu_request_core_seconds,
        daily.memory_usage_byte_seconds,
        daily.memory_request_byte_seconds,
        daily.cpu_cost,
        daily.cpu_used_cost,
        daily.memory_cost,
        daily.memory_used_cost,
        coalesce(pod_storage.storage_cost, 0) as storage_cost,
        daily.overcommitted_hours,
        daily.is_platform
    from daily
    inner join last_hour
        on
            daily.cluster_id = last_hour.cluster_id
            and daily.usage_date = last_hour.usage_date
            and daily.namespace = last_hour.namespace
            and daily.pod = last_hour.pod
    left join pod_storage
        on
            daily.cluster_id = pod_storage.cluster_id
            and daily.usage_date = pod_storage.usage_date
            and daily.namespace = pod_storage.namespace
            and daily.pod = pod_storage.pod
)

select * from final
