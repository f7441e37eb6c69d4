-- Every idle view except `hidden` hands out exactly the cluster-day's infrastructure idle
-- (within 0.000001): the same ledger, only the idle moves.
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
    views.*,
    idle.idle_cost
from views
inner join idle
    on
        views.cluster_id = idle.cluster_id
        and views.usage_date = idle.usage_date
where abs(views.idle_share_cost - idle.idle_cost) > 0.000001
