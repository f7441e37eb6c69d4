{{ config(**incremental_by_day('usage_date')) }}

-- One row per view, cluster, UTC day and owner: the owner's direct cost and workload idle plus
-- its share of infrastructure idle under each of the five idle views of the reference products
-- (SPEC §7), chosen per query without rebuilding the ledger: `by_cluster` (idle spread over the
-- cluster's owners by direct cost), `by_node` (over the owners that ran on each node),
-- `fleet_by_cost` (weights across the fleet, booked to the idle's own cluster), `separate`
-- (its own `__idle__` owner) and `hidden` (left out; totals then exclude idle). Every view
-- weighs within a day, so a day's run rebuilds that day only.
with

owner_costs as (
    select
        cluster_id,
        usage_date,
        node,
        team,
        cost_center,
        application,
        direct_cost,
        workload_idle_cost
    from {{ ref('int_owner_costs_by_node_daily') }}
    where {{ day_range_filter('usage_date') }}
),

idle_pools as (
    select
        cluster_id,
        usage_date,
        node,
        pool_cost
    from {{ ref('int_cost_pools_daily') }}
    where pool = 'infrastructure_idle' and {{ day_range_filter('usage_date') }}
),

owners as (
    select
        cluster_id,
        usage_date,
        team,
        cost_center,
        application,
        sum(direct_cost) as direct_cost,
        sum(workload_idle_cost) as workload_idle_cost
    from owner_costs
    group by cluster_id, usage_date, team, cost_center, application
),

node_weights as (
    select
        cluster_id,
        usage_date,
        node,
        team,
        cost_center,
        application,
        sum(direct_cost) as direct_cost,
        sum(sum(direct_cost)) over (partition by cluster_id, usage_date, node) as node_direct_cost
    from owner_costs
    where direct_cost > 0
    group by cluster_id, usage_date, node, team, cost_center, application
),

cluster_idle as (
    select
        cluster_id,
        usage_date,
        sum(pool_cost) as idle_cost
    from idle_pools
    group by cluster_id, usage_date
),

owner_weights as (
    select
        *,
        sum(case when direct_cost > 0 then direct_cost else 0 end)
            over (partition by cluster_id, usage_date)
            as cluster_direct_cost
    from owners
),

fleet_weights as (
    select
        usage_date,
        team,
        cost_center,
        application,
        sum(direct_cost) as direct_cost,
        sum(sum(direct_cost)) over (partition by usage_date) as fleet_direct_cost
    from owners
    where direct_cost > 0
    group by usage_date, team, cost_center, application
),

-- each node's idle over the owners that ran there (a node nobody used keeps its idle as
-- `__idle__`, so the view still adds up)
by_node_shares as (
    select
        idle_pools.cluster_id,
        idle_pools.usage_date,
        coalesce(node_weights.team, '__idle__') as team,
        coalesce(node_weights.cost_center, '__idle__') as cost_center,
        coalesce(node_weights.application, '__idle__') as application,
        sum(
            idle_pools.pool_cost
            * coalesce(node_weights.direct_cost / node_weights.node_direct_cost, 1)
        ) as idle_share_cost
    from idle_pools
    left join node_weights
        on
            idle_pools.cluster_id = node_weights.cluster_id
            and idle_pools.usage_date = node_weights.usage_date
            and idle_pools.node = node_weights.node
    group by
        idle_pools.cluster_id,
        idle_pools.usage_date,
        coalesce(node_weights.team, '__idle__'),
        coalesce(node_weights.cost_center, '__idle__'),
        coalesce(node_weights.application, '__idle__')
),

by_cluster_shares as (
    select
        cluster_idle.cluster_id,
        cluster_idle.usage_date,
        coalesce(owner_weights.team, '__idle__') as team,
        coalesce(owner_weights.cost_center, '__idle__') as cost_center,
        coalesce(owner_weights.application, '__idle__') as application,
        cluster_idle.idle_cost
        * coalesce(owner_weights.direct_cost / owner_weights.cluster_direct_cost, 1)
            as idle_share_cost
    from cluster_idle
    left join owner_weights
        on
            cluster_idle.cluster_id = owner_weights.cluster_id
            and cluster_idle.usage_date = owner_weights.usage_date
            and owner_weights.direct_cost > 0
),

fleet_shares as (
    select
        cluster_idle.cluster_id,
        cluster_idle.usage_date,
        coalesce(fleet_weights.team, '__idle__') as team,
        coalesce(fleet_weights.cost_center, '__idle__') as cost_center,
        coalesce(fleet_weights.application, '__idle__') as application,
        cluster_idle.idle_cost
        * coalesce(fleet_weights.direct_cost / fleet_weights.fleet_direct_cost, 1)
            as idle_share_cost
    from cluster_idle
    left join fleet_weights on cluster_idle.usage_date = fleet_weights.usage_date
),

separate_shares as (
    select
        cluster_id,
        usage_date,
        '__idle__' as team,
        '__idle__' as cost_center,
        '__idle__' as application,
        idle_cost as idle_share_cost
    from cluster_idle
),

shares as (
    select
        'by_node' as idle_view,
        *
    from by_node_shares
    union all
    select
        'by_cluster' as idle_view,
        *
    from by_cluster_shares
    union all
    select
        'fleet_by_cost' as idle_view,
        *
    from fleet_shares
    union all
    select
        'separate' as idle_view,
        *
    from separate_shares
),

views as (
    select 'by_node' as idle_view
    union all
    select 'by_cluster' as idle_view
    union all
    select 'fleet_by_cost' as idle_view
    union all
    select 'separate' as idle_view
    union all
    select 'hidden' as idle_view
),

ledger_rows as (
    select
        views.idle_view,
        owners.cluster_id,
        owners.usage_date,
        coalesce(owners.team, 'unallocated') as team,
        coalesce(owners.cost_center, 'unallocated') as cost_center,
        coalesce(owners.application, 'unallocated') as application,
        owners.direct_cost,
        owners.workload_idle_cost,
        0.0 as idle_share_cost
    from owners
    cross join views
    union all
    select
        idle_view,
        cluster_id,
        usage_date,
        coalesce(team, 'unallocated') as team,
        coalesce(cost_center, 'unallocated') as cost_center,
        coalesce(application, 'unallocated') as application,
        0.0 as direct_cost,
        0.0 as workload_idle_cost,
        idle_share_cost
    from shares
),

final as (
    select
        idle_view,
        cluster_id,
        usage_date,
        team,
        cost_center,
        application,
        sum(direct_cost) as direct_cost,
        sum(workload_idle_cost) as workload_idle_cost,
        sum(idle_share_cost) as idle_share_cost,
        sum(direct_cost + workload_idle_cost + idle_share_cost) as total_cost
    from ledger_rows
    group by idle_view, cluster_id, usage_date, team, cost_center, application
)

select * from final
