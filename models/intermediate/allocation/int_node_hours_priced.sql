{{ config(**incremental_by_day('usage_date')) }}

-- One row per node and hour it ran: the node-hour's cost, the node-day cost spread over the
-- hours in proportion to the fraction f_h of each hour the node ran, and its CPU and memory
-- parts (SPEC §5). Control-plane, master and infra nodes are platform nodes.
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

settings as (
    select
        cpu_cost_weight,
        memory_cost_weight
    from {{ ref('stg_config__settings') }}
),

final as (
    select
        node_hours.cluster_id,
        node_hours.node,
        node_hours.usage_date,
        node_hours.interval_start,
        node_hours.hour_fraction,
        node_hours.node_role,
        node_hours.node_role in ('control_plane', 'infra') as is_platform_node,
        node_costs.pricing_basis,
        coalesce(node_costs.node_cost * node_hours.hour_fraction / node_costs.hours_run, 0)
            as node_hour_cost,
        coalesce(
            node_costs.node_cost * node_hours.hour_fraction / node_costs.hours_run, 0
        ) * settings.cpu_cost_weight as cpu_cost,
        coalesce(
            node_costs.node_cost * node_hours.hour_fraction / node_costs.hours_run, 0
        ) * settings.memory_cost_weight as memory_cost
    from node_hours
    inner join node_costs
        on
            node_hours.cluster_id = node_costs.cluster_id
            and node_hours.node = node_costs.node
            and node_hours.usage_date = node_costs.usage_date
    cross join settings
)

select * from final
