-- One row per cluster, LoadBalancer Service and UTC day its load balancer cost something.
with

load_balancer_costs as (
    select
        cluster_id,
        usage_date,
        namespace,
        service,
        resource_key,
        pricing_basis,
        load_balancer_cost
    from {{ ref('int_load_balancer_costs_daily') }}
),

final as (
    select
        cluster_id,
        usage_date,
        namespace,
        service,
        resource_key as resource_id,
        pricing_basis,
        cast(load_balancer_cost as double) as load_balancer_cost
    from load_balancer_costs
)

select * from final
