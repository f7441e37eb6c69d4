{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day, node (null for volumes and load balancers without a pod), cost
-- family and owner: the owner's direct cost and workload idle, the platform's own usage, and
-- the basis metrics distribution weighs receivers by (SPEC §7). An owner is the resolved
-- (team, cost center, application); `owner_status` is `owned` when a team or cost center was
-- found, else `unowned` (the unowned receiver).
with

objects as (
    select
        cluster_id,
        usage_date,
        namespace,
        object_kind,
        object_name,
        node,
        is_platform,
        cpu_cost,
        cpu_used_cost,
        memory_cost,
        memory_used_cost,
        gpu_cost,
        gpu_used_cost,
        storage_cost,
        network_cost
    from {{ ref('int_cost_objects_daily') }}
    where {{ day_range_filter('usage_date') }}
),

owners as (
    select
        cluster_id,
        usage_date,
        namespace,
        object_kind,
        object_name,
        team,
        cost_center,
        application
    from {{ ref('int_cost_object_owners_daily') }}
    where {{ day_range_filter('usage_date') }}
),

owned_objects as (
    select
        objects.*,
        owners.team,
        owners.cost_center,
        owners.application,
        case
            when owners.team is null and owners.cost_center is null then 'unowned'
            else 'owned'
        end as owner_status
    from objects
    left join owners
        on
            objects.cluster_id = owners.cluster_id
            and objects.usage_date = owners.usage_date
            and objects.namespace = owners.namespace
            and objects.object_kind = owners.object_kind
            and objects.object_name = owners.object_name
),

-- each object's costs by the family they belong to
by_family as (
    select
        cluster_id,
        usage_date,
        node,
        'compute' as cost_family,
        team,
        cost_center,
        application,
        owner_status,
        is_platform,
        cpu_used_cost + memory_used_cost + gpu_used_cost as used_cost,
        (cpu_cost - cpu_used_cost) + (memory_cost - memory_used_cost)
        + (gpu_cost - gpu_used_cost) as idle_cost,
        cpu_cost,
        memory_cost,
        0.0 as storage_cost,
        0.0 as network_cost
    from owned_objects
    union all
    select
        cluster_id,
        usage_date,
        node,
        'storage' as cost_family,
        team,
        cost_center,
        application,
        owner_status,
        is_platform,
        storage_cost as used_cost,
        0.0 as idle_cost,
        0.0 as cpu_cost,
        0.0 as memory_cost,
        storage_cost,
        0.0 as network_cost
    from owned_objects
    where storage_cost != 0
    union all
    select
        cluster_id,
        usage_date,
        node,
        'network' as cost_family,
        team,
        cost_center,
        application,
        owner_status,
        is_platform,
        network_cost as used_cost,
        0.0 as idle_cost,
        0.0 as cpu_cost,
        0.0 as memory_cost,
        0.0 as storage_cost,
        network_cost
    from owned_objects
    where network_cost != 0
),

final as (
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        team,
        cost_center,
        application,
        owner_status,
        {{ exact_sum('case when not is_platform then used_cost else 0 end') }} as direct_cost,
        {{ exact_sum('case when not is_platform then idle_cost else 0 end') }}
            as workload_idle_cost,
        {{ exact_sum('case when is_platform then used_cost + idle_cost else 0 end') }}
            as platform_usage_cost,
        {{ exact_sum('case when not is_platform then cpu_cost else 0 end') }} as basis_cpu_cost,
        {{ exact_sum('case when not is_platform then memory_cost else 0 end') }}
            as basis_memory_cost,
        {{ exact_sum('case when not is_platform then storage_cost else 0 end') }}
            as basis_storage_cost,
        {{ exact_sum('case when not is_platform then network_cost else 0 end') }}
            as basis_network_cost
    from by_family
    group by
        cluster_id, usage_date, node, cost_family, team, cost_center, application, owner_status
)

select * from final
