-- One row per cluster, LoadBalancer Service and UTC day the bill charged its load balancer
-- (SPEC §4): matched by the ID the Service reports. Several Services may report one load
-- balancer (AKS's shared `kubernetes` LB): its day cost is split among them evenly (the
-- load-balancer CSV carries no hours, so every listed Service counts as there all day), in
-- decimal, the leftover 1e-10 units to the first Service by namespace and name, so the shares
-- add up to the load balancer's cost exactly. A cluster without a cloud bill prices its load
-- balancers from the rate card per hour, 24 hours a day: the load balancer's ID price wins,
-- else a reporting Service's `<namespace>/<service>` price (the first Service by namespace and
-- name that has one), else `*`; the price in effect that day. A rate-card load balancer that
-- several Services report is charged once and split among them the same way as a billed one.
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

billed_lb_days as (
    select
        cluster_id,
        charge_date as usage_date,
        match_key,
        max(resource_key) as resource_key,
        'bill' as pricing_basis,
        cast(sum(effective_cost) as decimal(38, 10)) as lb_cost
    from lb_lines
    group by cluster_id, charge_date, match_key
),

-- Every price that could apply to a rate-card load balancer on a day: its ID (rank 0), one of
-- its Services' `<namespace>/<service>` (rank 1), `*` (rank 2).
rate_card_candidates as (
    select
        cluster_days.cluster_id,
        cluster_days.usage_date,
        lower(services.load_balancer_id) as match_key,
        services.load_balancer_id,
        services.namespace,
        services.service,
        lb_prices.price,
        row_number() over (
            partition by
                cluster_days.cluster_id, cluster_days.usage_date,
                lower(services.load_balancer_id)
            order by
                case
                    when lb_prices.selector = services.load_balancer_id then 0
                    when lb_prices.selector = '*' then 2
                    when lb_prices.selector is not null then 1
                    else 3
                end,
                services.namespace asc,
                services.service asc,
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

rate_card_lb_days as (
    select
        cluster_id,
        usage_date,
        match_key,
        load_balancer_id as resource_key,
        case when price is null then 'unpriced' else 'rate_card' end as pricing_basis,
        cast(coalesce(price * 24, 0) as decimal(38, 10)) as lb_cost
    from rate_card_candidates
    where precedence = 1
),

lb_days as (
    select * from billed_lb_days
    union all
    select * from rate_card_lb_days
),

sharing_services as (
    select distinct
        cluster_id,
        namespace,
        service,
        lower(load_balancer_id) as match_key
    from services
),

sharing as (
    select
        lb_days.cluster_id,
        lb_days.usage_date,
        lb_days.match_key,
        lb_days.resource_key,
        lb_days.pricing_basis,
        lb_days.lb_cost,
        sharing_services.namespace,
        sharing_services.service,
        count(*) over (
            partition by lb_days.cluster_id, lb_days.usage_date, lb_days.match_key
        ) as sharing_count,
        row_number() over (
            partition by lb_days.cluster_id, lb_days.usage_date, lb_days.match_key
            order by sharing_services.namespace asc, sharing_services.service asc
        ) as sharing_rank
    from lb_days
    inner join sharing_services
        on
            lb_days.cluster_id = sharing_services.cluster_id
            and lb_days.match_key = sharing_services.match_key
),

shares as (
    select
        *,
        {{ decimal_divide('lb_cost', 'sharing_count', 10) }} as even_share
    from sharing
),

split as (
    select
        cluster_id,
        usage_date,
        namespace,
        service,
        resource_key,
        pricing_basis,
        even_share
        + case
            when sharing_rank = 1 then lb_cost - even_share * sharing_count
            else 0
        end as share_cost
    from shares
),

-- A Service that reports several load balancers (one per zone) gets its share of each.
final as (
    select
        cluster_id,
        usage_date,
        namespace,
        service,
        max(resource_key) as resource_key,
        -- a cluster is billed or on the rate card, never both; priced beats unpriced
        min(pricing_basis) as pricing_basis,
        cast(sum(share_cost) as double) as load_balancer_cost
    from split
    group by cluster_id, usage_date, namespace, service
)

select * from final
