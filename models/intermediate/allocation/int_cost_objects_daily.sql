{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day, cost object and platform status: a pod (its compute cost and its
-- share of the volumes it mounted; a platform row for its platform hours and a user row for
-- the rest, see int_pod_costs_daily), a volume no pod mounted that day (to its claim's
-- namespace), or a load balancer (to its Service's namespace). This is every dollar of a
-- cluster-day that Kubernetes claims; node idle, platform nodes, fees and unallocated
-- resources are added in int_cluster_costs_daily. Used cost is direct cost; the rest of a
-- pod's cost is its workload idle (SPEC §5). Platform: a platform namespace, or a pod-hour on
-- a platform node.
with

pods as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        node,
        pod_hours,
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
        storage_cost,
        overcommitted_hours,
        is_platform
    from {{ ref('int_pod_costs_daily') }}
    where {{ day_range_filter('usage_date') }}
),

volume_splits as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        pv_name,
        storage_cost
    from {{ ref('int_volume_costs_split_daily') }}
    where not is_unattributed and {{ day_range_filter('usage_date') }}
),

load_balancers as (
    select
        cluster_id,
        usage_date,
        namespace,
        service,
        load_balancer_cost
    from {{ ref('int_load_balancer_costs_daily') }}
    where {{ day_range_filter('usage_date') }}
),

namespace_classes as (
    select
        namespace,
        is_platform_namespace
    from {{ ref('int_namespaces_classified') }}
),

-- Volume cost with no pod-day to carry it (no pod mounted the volume that day, or the pod
-- that did reported no compute usage) stays with the claim's namespace.
namespace_volumes as (
    select
        volume_splits.cluster_id,
        volume_splits.usage_date,
        volume_splits.namespace,
        volume_splits.pv_name,
        {{ exact_sum('volume_splits.storage_cost') }} as storage_cost
    from volume_splits
    left join pods
        on
            volume_splits.cluster_id = pods.cluster_id
            and volume_splits.usage_date = pods.usage_date
            and volume_splits.namespace = pods.namespace
            and volume_splits.pod = pods.pod
    where pods.pod is null
    group by
        volume_splits.cluster_id,
        volume_splits.usage_date,
        volume_splits.namespace,
        volume_splits.pv_name
),

namespace_objects as (
    select
        cluster_id,
        usage_date,
        namespace,
        'volume' as object_kind,
        pv_name as object_name,
        storage_cost,
        0.0 as network_cost
    from namespace_volumes
    union all
    select
        cluster_id,
        usage_date,
        namespace,
        'load_balancer' as object_kind,
        service as object_name,
        0.0 as storage_cost,
        load_balancer_cost as network_cost
    from load_balancers
),

pod_objects as (
    select
        cluster_id,
        usage_date,
        namespace,
        'pod' as object_kind,
        pod as object_name,
        node,
        pod_hours,
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
        storage_cost,
        0.0 as network_cost,
        overcommitted_hours,
        is_platform
    from pods
),

other_objects as (
    select
        namespace_objects.cluster_id,
        namespace_objects.usage_date,
        namespace_objects.namespace,
        namespace_objects.object_kind,
        namespace_objects.object_name,
        cast(null as {{ dbt.type_string() }}) as node,
        0 as pod_hours,
        0.0 as cpu_usage_core_seconds,
        0.0 as cpu_request_core_seconds,
        0.0 as memory_usage_byte_seconds,
        0.0 as memory_request_byte_seconds,
        0.0 as cpu_cost,
        0.0 as cpu_used_cost,
        0.0 as memory_cost,
        0.0 as memory_used_cost,
        0.0 as gpu_seconds,
        0.0 as gpu_cost,
        0.0 as gpu_used_cost,
        namespace_objects.storage_cost,
        namespace_objects.network_cost,
        0 as overcommitted_hours,
        coalesce(namespace_classes.is_platform_namespace, false) as is_platform
    from namespace_objects
    left join namespace_classes on namespace_objects.namespace = namespace_classes.namespace
),

unioned as (
    select * from pod_objects
    union all
    select * from other_objects
),

final as (
    select
        *,
        cpu_cost + memory_cost + gpu_cost + storage_cost + network_cost as total_cost,
        cpu_used_cost + memory_used_cost + gpu_used_cost + storage_cost + network_cost
            as used_cost,
        (cpu_cost - cpu_used_cost) + (memory_cost - memory_used_cost)
        + (gpu_cost - gpu_used_cost) as workload_idle_cost
    from unioned
)

select * from final
