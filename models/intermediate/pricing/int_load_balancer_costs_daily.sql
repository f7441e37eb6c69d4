-- One row per cluster, LoadBalancer Service and UTC day the bill charged its load balancer
-- (SPEC §4): matched by the ID the Service reports. Clusters with no cloud bill price their
-- load balancers from the rate card per hour (selector: the load balancer ID,
-- `<namespace>/<service>`, or `*`).
with

services as (
    select
        cluster_id,
        namespace,
        service,
        load_balancer_id
    from {{ ref('stg_cluster__lb_services') }}
),

clusters as (
    select
        cluster_id,
        provider
    from {{ ref('stg_config__clusters') }}
),

usage_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
),

-- A load balancer billed on a day its cluster reported no usage is unallocated `no_usage`
-- (int_unallocated_costs_daily), not a Service's cost.
lb_lines as (
    select
        scoped_lines.cluster_id,
        scoped_lines.charge_date,
        scoped_lines.match_key,
        scoped_lines.resource_key,
        scoped_lines.effective_cost
    from {{ ref('int_billing_lines_scoped') }} as scoped_lines
    inner join usage_days
        on
            scoped_lines.cluster_id = usage_days.cluster_id
            and scoped_lines.charge_date = usage_days.usage_date
    where scoped_lines.scope_status = 'matched' and scoped_lines.resource_type = 'load_balancer'
),

lb_prices as (
    select
        cluster_id,
        selector,
        price,
        effective_from,
        list_position
    from {{ ref('stg_rate_card__prices') }}
    where resource = 'load_balancer' and unit = 'hour'
),

cluster_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
),

billed as (
    select
        lb_lines.cluster_id,
        lb_lines.charge_date as usage_date,
        services.namespace,
        services.service,
        max(lb_lines.resource_key) as resource_key,
        'bill' as pricing_basis,
        cast(sum(lb_lines.effective_cost) as double) as load_balancer_cost
    from lb_lines
    inner join services
        on
            lb_lines.cluster_id = services.cluster_id
            and lb_lines.match_key = lower(services.load_balancer_id)
    group by lb_lines.cluster_id, lb_lines.charge_date, services.namespace, services.service
),

rate_card_candidates as (
    select
        cluster_days.cluster_id,
        cluster_days.usage_date,
        services.namespace,
        services.service,
        services.load_balancer_id,
        lb_prices.price,
        row_number() over (
            partition by
                cluster_days.cluster_id, cluster_days.usage_date, services.namespace,
                services.service
            order by
                case when lb_prices.selector = '*' then 1 else 0 end,
                lb_prices.effective_from desc,
                lb_prices.list_position asc
        ) as precedence
    from cluster_days
    inner join clusters on cluster_days.cluster_id = clusters.cluster_id
    inner join services on cluster_days.cluster_id = services.cluster_id
    left join lb_prices
        on
            cluster_days.cluster_id = lb_prices.cluster_id
            and cluster_days.usage_date >= lb_prices.effective_from
            and lb_prices.selector in (
                services.load_balancer_id, services.namespace || '/' || services.service, '*'
            )
    where clusters.provider = 'on_prem'
),

rate_card as (
    select
        cluster_id,
        usage_date,
        namespace,
        service,
        load_balancer_id as resource_key,
        case when price is null then 'unpriced' else 'rate_card' end as pricing_basis,
        coalesce(price * 24, 0) as load_balancer_cost
    from rate_card_candidates
    where precedence = 1
),

final as (
    select * from billed
    union all
    select * from rate_card
)

select * from final
