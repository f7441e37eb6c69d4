-- Every idle view except `hidden` hands out exactly the cluster-day's infrastructure idle
-- (within 0.000001): the same ledger, only the idle moves. Each view is checked against every
-- cluster-day with idle (a cross join, then a full outer join), so a view that loses a
-- cluster-day, or hands out idle a cluster-day does not have, fails.
with

idle as (
    select
        cluster_id,
        usage_date,
        sum(pool_cost) as idle_cost
    from {{ ref('int_cost_pools_daily') }}
    where pool = 'infrastructure_idle'
    group by cluster_id, usage_date
),

view_names as (
    select 'by_node' as idle_view
    union all
    select 'by_cluster' as idle_view
    union all
    select 'fleet_by_cost' as idle_view
    union all
    select 'separate' as idle_view
),

expected as (
    select
        view_names.idle_view,
        idle.cluster_id,
        idle.usage_date,
        idle.idle_cost
    from view_names
    cross join idle
),

views as (
    select
        idle_view,
        cluster_id,
        usage_date,
        sum(idle_share_cost) as idle_share_cost
    from {{ ref('rpt_idle_views_daily') }}
    where idle_view != 'hidden'
    group by idle_view, cluster_id, usage_date
)

select
    coalesce(expected.idle_view, views.idle_view) as idle_view,
    coalesce(expected.cluster_id, views.cluster_id) as cluster_id,
    coalesce(expected.usage_date, views.usage_date) as usage_date,
    expected.idle_cost,
    views.idle_share_cost
from expected
full outer join views
    on
        expected.idle_view = views.idle_view
        and expected.cluster_id = views.cluster_id
        and expected.usage_date = views.usage_date
where abs(coalesce(expected.idle_cost, 0) - coalesce(views.idle_share_cost, 0)) > 0.000001
