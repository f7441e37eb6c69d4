-- One row per cluster, node and UTC day the node ran: how it was priced and what it cost.
with

node_costs as (
    select
        cluster_id,
        node,
        usage_date,
        provider,
        cloud_provider,
        instance_key,
        scale_set_name,
        node_role,
        instance_type,
        region,
        purchase_option,
        pricing_basis,
        estimate_source,
        hours_run,
        billed_hours,
        node_cost
    from {{ ref('int_node_costs_daily') }}
),

final as (
    select
        cluster_id,
        node,
        usage_date,
        provider,
        cloud_provider,
        instance_key as instance_id,
        scale_set_name,
        node_role,
        instance_type,
        region,
        purchase_option,
        pricing_basis,
        estimate_source,
        cast(hours_run as double) as hours_run,
        cast(billed_hours as double) as billed_hours,
        cast(node_cost as double) as node_cost
    from node_costs
)

select * from final
