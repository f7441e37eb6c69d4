{{ config(**incremental_by_day('usage_date')) }}

-- One row per node and hour it ran: the node-hour's cost, the node-day cost spread over the
-- hours in proportion to the fraction f_h of each hour the node ran, and its CPU and memory
-- parts (SPEC §5). On a GPU node (int_node_gpus_daily) the GPU share of the node-hour's cost is
-- its GPU part, `gpu_capacity_seconds` = GPUs × 3600 × f_h, and the CPU and memory weights
-- split the rest; on any other node the GPU part is 0 and CPU and memory split it all.
-- Control-plane, master and infra nodes are platform nodes.
with

node_hours as (
    select
        cluster_id,
        node,
        usage_date,
        interval_start,
        hour_fraction,
        node_role
    from {{ ref('int_node_hours') }}
    where {{ day_range_filter('usage_date') }}
),

node_costs as (
    select
        cluster_id,
        node,
        usage_date,
        hours_run,
        node_cost,
        pricing_basis
    from {{ ref('int_node_costs_daily') }}
    where {{ day_range_filter('usage_date') }}
),

node_gpus as (
    select
        cluster_id,
        node,
        usage_date,
        gpu_count,
        gpu_share
    from {{ ref('int_node_gpus_daily') }}
    where {{ day_range_filter('usage_date') }}
),

settings as (
    select
        cpu_cost_weight,
        memory_cost_weight
    from {{ ref('stg_config__settings') }}
),

hour_costs as (
    select
        node_hours.cluster_id,
        node_hours.node,
        node_hours.usage_date,
        node_hours.interval_start,
        node_hours.hour_fraction,
        node_hours.node_role,
        node_costs.pricing_basis,
        coalesce(node_costs.node_cost * node_hours.hour_fraction / node_costs.hours_run, 0)
            as node_hour_cost,
        coalesce(node_gpus.gpu_count, 0) as gpu_count,
        node_gpus.gpu_share
    from node_hours
    inner join node_costs
        on
            node_hours.cluster_id = node_costs.cluster_id
            and node_hours.node = node_costs.node
            and node_hours.usage_date = node_costs.usage_date
    left join node_gpus
        on
            node_hours.cluster_id = node_gpus.cluster_id
            and node_hours.node = node_gpus.node
            and node_hours.usage_date = node_gpus.usage_date
),

final as (
    select
        hour_costs.cluster_id,
        hour_costs.node,
        hour_costs.usage_date,
        hour_costs.interval_start,
        hour_costs.hour_fraction,
        hour_costs.node_role,
        hour_costs.node_role in ('control_plane', 'infra') as is_platform_node,
        hour_costs.pricing_basis,
        hour_costs.node_hour_cost,
        hour_costs.gpu_count,
        hour_costs.gpu_count * 3600.0 * hour_costs.hour_fraction as gpu_capacity_seconds,
        coalesce(hour_costs.node_hour_cost * hour_costs.gpu_share, 0) as gpu_cost,
        -- a node without GPUs keeps the exact figures it had before GPUs were priced
        case
            when hour_costs.gpu_share is null
                then hour_costs.node_hour_cost * settings.cpu_cost_weight
            else
                (hour_costs.node_hour_cost - hour_costs.node_hour_cost * hour_costs.gpu_share)
                * settings.cpu_cost_weight
        end as cpu_cost,
        case
            when hour_costs.gpu_share is null
                then hour_costs.node_hour_cost * settings.memory_cost_weight
            else
                (hour_costs.node_hour_cost - hour_costs.node_hour_cost * hour_costs.gpu_share)
                * settings.memory_cost_weight
        end as memory_cost
    from hour_costs
    cross join settings
)

select * from final
