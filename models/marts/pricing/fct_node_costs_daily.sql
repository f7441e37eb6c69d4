-- One row per cluster, node and UTC day the node ran: how it was priced and what it cost, and
-- on a GPU node its GPUs and the GPU part of its cost (SPEC §5).
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

node_gpus as (
    select
        cluster_id,
        node,
        usage_date,
        gpu_model_name,
        gpu_count,
        gpu_share,
        gpu_share_source
    from {{ ref('int_node_gpus_daily') }}
),

final as (
    select
        node_costs.cluster_id,
        node_costs.node,
        node_costs.usage_date,
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
        cast(node_cost as double) as node_cost,
        node_gpus.gpu_model_name,
        cast(coalesce(node_gpus.gpu_count, 0) as integer) as gpu_count,
        cast(coalesce(node_gpus.gpu_share, 0) as double) as gpu_share_ratio,
        node_gpus.gpu_share_source,
        cast(coalesce(node_costs.node_cost * node_gpus.gpu_share, 0) as double) as gpu_cost
    from node_costs
    left join node_gpus
        on
            node_costs.cluster_id = node_gpus.cluster_id
            and node_costs.node = node_gpus.node
            and node_costs.usage_date = node_gpus.usage_date
)

select * from final
