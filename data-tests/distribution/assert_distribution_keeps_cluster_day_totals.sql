-- SPEC §7: distribution keeps each cluster-day total and each cluster-day-family total equal
-- before and after (within 0.000001). Per cluster and day, the owner mart sums to the ledger
-- cost of the cluster costs; per cluster, day and cost family it sums to that family's
-- in-scope cost — the family's in-scope billing lines plus what the ledger priced otherwise
-- (nodes: compute, volumes: storage, load balancers: network, on estimates or the rate card)
-- — since every distributed share keeps the family of the pool it came from. Full outer
-- joins: a cluster-day or family missing on either side fails.
with

owner_family_totals as (
    select
        cluster_id,
        usage_date,
        cost_family,
        sum(total_cost) as owner_total
    from {{ ref('fct_owner_costs_daily') }}
    group by cluster_id, usage_date, cost_family
),

owner_totals as (
    select
        cluster_id,
        usage_date,
        sum(owner_total) as owner_total
    from owner_family_totals
    group by cluster_id, usage_date
),

cluster_totals as (
    select
        cluster_id,
        usage_date,
        ledger_cost
    from {{ ref('fct_cluster_costs_daily') }}
),

in_scope_parts as (
    select
        cluster_id,
        charge_date as usage_date,
        cost_family,
        cast(effective_cost as double) as in_scope_cost
    from {{ ref('int_billing_lines_scoped') }}
    union all
    select
        cluster_id,
        usage_date,
        'compute' as cost_family,
        node_cost as in_scope_cost
    from {{ ref('int_node_costs_daily') }}
    where pricing_basis != 'bill'
    union all
    select
        cluster_id,
        usage_date,
        'storage' as cost_family,
        volume_cost as in_scope_cost
    from {{ ref('int_volume_costs_daily') }}
    where pricing_basis != 'bill'
    union all
    select
        cluster_id,
        usage_date,
        'network' as cost_family,
        load_balancer_cost as in_scope_cost
    from {{ ref('int_load_balancer_costs_daily') }}
    where pricing_basis != 'bill'
),

family_totals as (
    select
        cluster_id,
        usage_date,
        cost_family,
        sum(in_scope_cost) as in_scope_cost
    from in_scope_parts
    group by cluster_id, usage_date, cost_family
),

day_differences as (
    select
        coalesce(cluster_totals.cluster_id, owner_totals.cluster_id) as cluster_id,
        coalesce(cluster_totals.usage_date, owner_totals.usage_date) as usage_date,
        cast(null as {{ dbt.type_string() }}) as cost_family,
        cluster_totals.ledger_cost as expected_cost,
        owner_totals.owner_total
    from cluster_totals
    full outer join owner_totals
        on
            cluster_totals.cluster_id = owner_totals.cluster_id
            and cluster_totals.usage_date = owner_totals.usage_date
),

family_differences as (
    select
        coalesce(family_totals.cluster_id, owner_family_totals.cluster_id) as cluster_id,
        coalesce(family_totals.usage_date, owner_family_totals.usage_date) as usage_date,
        coalesce(family_totals.cost_family, owner_family_totals.cost_family) as cost_family,
        family_totals.in_scope_cost as expected_cost,
        owner_family_totals.owner_total
    from family_totals
    full outer join owner_family_totals
        on
            family_totals.cluster_id = owner_family_totals.cluster_id
            and family_totals.usage_date = owner_family_totals.usage_date
            and family_totals.cost_family = owner_family_totals.cost_family
),

final as (
    select * from day_differences
    union all
    select * from family_differences
)

select * from final
where abs(coalesce(expected_cost, 0) - coalesce(owner_total, 0)) > 0.000001
