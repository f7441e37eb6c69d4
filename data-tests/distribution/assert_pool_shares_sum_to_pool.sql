-- SPEC §7: every distributed pool is handed out whole — its shares (kept, spread, fixed or
-- separate) add up to the pool, per cluster, day, family and pool (within 0.000001). A full
-- outer join: a pool with no shares at all, or shares of a pool that is not there, fails too.
-- Workload idle under the `owner` rule (the default) is not distributed: it stays with the
-- workload's owner, so it has no shares and is left out here.
with

workload_idle_rules as (
    select
        cluster_id,
        rule
    from {{ ref('stg_config__distribution_rules') }}
    where pool = 'workload_idle'
),

owner_rule_clusters as (
    select clusters.cluster_id
    from (select distinct cluster_id from {{ ref('int_cost_pools_daily') }}) as clusters
    left join workload_idle_rules as own_rule on clusters.cluster_id = own_rule.cluster_id
    left join workload_idle_rules as any_rule on any_rule.cluster_id = '*'
    where coalesce(own_rule.rule, any_rule.rule, 'owner') = 'owner'
),

pools as (
    select
        pool_rows.cluster_id,
        pool_rows.usage_date,
        pool_rows.cost_family,
        pool_rows.pool,
        sum(pool_rows.pool_cost) as pool_cost
    from {{ ref('int_cost_pools_daily') }} as pool_rows
    left join owner_rule_clusters
        on pool_rows.cluster_id = owner_rule_clusters.cluster_id
    where not (pool_rows.pool = 'workload_idle' and owner_rule_clusters.cluster_id is not null)
    group by pool_rows.cluster_id, pool_rows.usage_date, pool_rows.cost_family, pool_rows.pool
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
    coalesce(pools.cluster_id, shares.cluster_id) as cluster_id,
    coalesce(pools.usage_date, shares.usage_date) as usage_date,
    coalesce(pools.cost_family, shares.cost_family) as cost_family,
    coalesce(pools.pool, shares.pool) as pool,
    pools.pool_cost,
    shares.share_cost
from pools
full outer join shares
    on
        pools.cluster_id = shares.cluster_id
        and pools.usage_date = shares.usage_date
        and pools.cost_family = shares.cost_family
        and pools.pool = shares.pool
where abs(coalesce(pools.pool_cost, 0) - coalesce(shares.share_cost, 0)) > 0.000001
