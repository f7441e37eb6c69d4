-- SPEC §7: distribution keeps each cluster-day-family total equal before and after (within
-- 0.000001): the owner mart sums to the ledger of the cluster costs, per cluster and day.
with

owner_totals as (
    select
        cluster_id,
        usage_date,
        sum(total_cost) as owner_total
    from {{ ref('fct_owner_costs_daily') }}
    group by cluster_id, usage_date
),

cluster_totals as (
    select
        cluster_id,
        usage_date,
        ledger_cost
    from {{ ref('fct_cluster_costs_daily') }}
)

select
    cluster_totals.cluster_id,
    cluster_totals.usage_date,
    cluster_totals.ledger_cost,
    owner_totals.owner_total
from cluster_totals
full outer join owner_totals
    on
        cluster_totals.cluster_id = owner_totals.cluster_id
        and cluster_totals.usage_date = owner_totals.usage_date
where
    abs(coalesce(cluster_totals.ledger_cost, 0) - coalesce(owner_totals.owner_total, 0)) > 0.000001
