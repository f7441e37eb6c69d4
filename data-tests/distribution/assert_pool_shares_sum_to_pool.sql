-- SPEC §7: every distributed pool is handed out whole — its shares (kept, spread, fixed or
-- separate) add up to the pool, per cluster, day, family and pool (within 0.000001).
with

pools as (
    select
        cluster_id,
        usage_date,
        cost_family,
        pool,
        sum(pool_cost) as pool_cost
    from {{ ref('int_cost_pools_daily') }}
    group by cluster_id, usage_date, cost_family, pool
),

shares as (
    select
        cluster_id,
        usage_date,
        cost_family,
        pool,
        sum(share_cost) as share_cost
    from {{ ref('int_shared_costs_distributed') }}
    group by cluster_id, usage_date, cost_family, pool
)

select
    pools.*,
    shares.share_cost
from pools
inner join shares
    on
        pools.cluster_id = shares.cluster_id
        and pools.usage_date = shares.usage_date
        and pools.cost_family = shares.cost_family
        and pools.pool = shares.pool
where abs(pools.pool_cost - shares.share_cost) > 0.000001
