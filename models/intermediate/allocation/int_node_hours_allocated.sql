{{ config(**incremental_by_day('usage_date')) }}

-- One row per node-hour: its cost, what its pods claimed, and the rest. On a worker node the
-- unclaimed rest is infrastructure idle; on a control-plane, master or infra node it is
-- platform cost (those nodes count as fully used by the platform, SPEC §5).
with

node_hours as (
    select
        cluster_id,
        node,
        usage_date,
        interval_start,
        is_platform_node,
        pricing_basis,
        node_hour_cost,
        cpu_cost,
        memory_cost,
        gpu_cost
    from {{ ref('int_node_hours_priced') }}
    where {{ day_range_filter('usage_date') }}
),

pod_hours as (
    select
        cluster_id,
        node,
        interval_start,
        cpu_cost,
        memory_cost,
        gpu_cost,
        is_cpu_overcommitted,
        is_memory_overcommitted
    from {{ ref('int_pod_hours_allocated') }}
    where {{ day_range_filter('usage_date') }}
),

claimed as (
    select
        cluster_id,
        node,
        interval_start,
        {{ exact_sum('cpu_cost') }} as claimed_cpu_cost,
        {{ exact_sum('memory_cost') }} as claimed_memory_cost,
        {{ exact_sum('gpu_cost') }} as claimed_gpu_cost,
        max(case when is_cpu_overcommitted or is_memory_overcommitted then 1 else 0 end) = 1
            as is_overcommitted
    from pod_hours
    group by cluster_id, node, interval_start
),

final as (
    select
        node_hours.cluster_id,
        node_hours.node,
        node_hours.usage_date,
        node_hours.interval_start,
        node_hours.is_platform_node,
        node_hours.pricing_basis,
        node_hours.node_hour_cost,
        coalesce(claimed.claimed_cpu_cost, 0) + coalesce(claimed.claimed_memory_cost, 0)
        + coalesce(claimed.claimed_gpu_cost, 0) as claimed_cost,
        -- never negative: claims are scaled to at most the node-hour's parts
        greatest(node_hours.cpu_cost - coalesce(claimed.claimed_cpu_cost, 0), 0)
        + greatest(node_hours.memory_cost - coalesce(claimed.claimed_memory_cost, 0), 0)
        + greatest(node_hours.gpu_cost - coalesce(claimed.claimed_gpu_cost, 0), 0)
            as unclaimed_cost,
        node_hours.gpu_cost,
        greatest(node_hours.gpu_cost - coalesce(claimed.claimed_gpu_cost, 0), 0)
            as unclaimed_gpu_cost,
        coalesce(claimed.is_overcommitted, false) as is_overcommitted
    from node_hours
    left join claimed
        on
            node_hours.cluster_id = claimed.cluster_id
            and node_hours.node = claimed.node
            and node_hours.interval_start = claimed.interval_start
)

select * from final
