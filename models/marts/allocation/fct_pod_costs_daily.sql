{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day, namespace and pod: what the pod cost, who owns it, and why.
with

pod_objects as (
    select
        cluster_id,
        usage_date,
        namespace,
        object_name as pod,
        node,
        pod_hours,
        cpu_usage_core_seconds,
        cpu_request_core_seconds,
        memory_usage_byte_seconds,
        memory_request_byte_seconds,
        cpu_cost,
        memory_cost,
        gpu_seconds,
        gpu_cost,
        storage_cost,
        network_cost,
        used_cost,
        workload_idle_cost,
        total_cost,
        overcommitted_hours,
        is_platform
    from {{ ref('int_cost_objects_daily') }}
    where object_kind = 'pod' and {{ day_range_filter('usage_date') }}
),

owners as (
    select
        cluster_id,
        usage_date,
        namespace,
        object_name as pod,
        team,
        team_source,
        cost_center,
        cost_center_source,
        application,
        application_source
    from {{ ref('int_cost_object_owners_daily') }}
    where object_kind = 'pod' and {{ day_range_filter('usage_date') }}
),

workloads as (
    select
        cluster_id,
        namespace,
        pod,
        workload_kind,
        workload_name,
        workload_source
    from {{ ref('int_pod_workloads') }}
),

labels as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        labels
    from {{ ref('int_pod_label_maps_daily') }}
    where {{ day_range_filter('usage_date') }}
),

final as (
    select
        pod_objects.cluster_id,
        pod_objects.usage_date,
        pod_objects.namespace,
        pod_objects.pod,
        pod_objects.node,
        workloads.workload_kind,
        workloads.workload_name,
        workloads.workload_source,
        coalesce(owners.team, 'unallocated') as team,
        owners.team_source,
        coalesce(owners.cost_center, 'unallocated') as cost_center,
        owners.cost_center_source,
        coalesce(owners.application, 'unallocated') as application,
        owners.application_source,
        pod_objects.is_platform,
        -- Unowned is direct cost no owner rule resolved (SPEC §6, §8): platform rows are the
        -- platform's cost, never unowned, whether or not a rule named an owner.
        not pod_objects.is_platform
        and owners.team is null
        and owners.cost_center is null as is_unowned,
        cast(pod_objects.pod_hours as double) as pod_hours,
        pod_objects.cpu_usage_core_seconds / 3600.0 as cpu_usage_core_hours,
        pod_objects.cpu_request_core_seconds / 3600.0 as cpu_request_core_hours,
        pod_objects.memory_usage_byte_seconds / 3600.0 / 1073741824.0
            as memory_usage_gib_hours,
        pod_objects.memory_request_byte_seconds / 3600.0 / 1073741824.0
            as memory_request_gib_hours,
        pod_objects.cpu_cost,
        pod_objects.memory_cost,
        pod_objects.gpu_seconds / 3600.0 as gpu_hours,
        pod_objects.gpu_cost,
        pod_objects.storage_cost,
        pod_objects.network_cost,
        pod_objects.used_cost,
        pod_objects.workload_idle_cost,
        pod_objects.total_cost,
        cast(pod_objects.overcommitted_hours as integer) as overcommitted_hours,
        labels.labels
    from pod_objects
    left join owners
        on
            pod_objects.cluster_id = owners.cluster_id
            and pod_objects.usage_date = owners.usage_date
            and pod_objects.namespace = owners.namespace
            and pod_objects.pod = owners.pod
    left join workloads
        on
            pod_objects.cluster_id = workloads.cluster_id
            and pod_objects.namespace = workloads.namespace
            and pod_objects.pod = workloads.pod
    left join labels
        on
            pod_objects.cluster_id = labels.cluster_id
            and pod_objects.usage_date = labels.usage_date
            and pod_objects.namespace = labels.namespace
            and pod_objects.pod = labels.pod
)

select * from final
