-- One row per cluster, UTC day and billed in-scope resource nothing in Kubernetes claims.
with

unallocated as (
    select
        cluster_id,
        usage_date,
        cost_family,
        resource_type,
        resource_key,
        resource_id,
        unallocated_reason,
        unallocated_cost
    from {{ ref('int_unallocated_costs_daily') }}
),

final as (
    select
        cluster_id,
        usage_date,
        -- as the bill writes it; grouped by the normalized key, so one resource is one row
        min(resource_id) as resource_id,
        resource_type,
        cost_family,
        unallocated_reason,
        sum(unallocated_cost) as unallocated_cost
    from unallocated
    group by cluster_id, usage_date, resource_key, resource_type, cost_family, unallocated_reason
)

select * from final
