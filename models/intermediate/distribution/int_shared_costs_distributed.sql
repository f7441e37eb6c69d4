{{ config(**incremental_by_day('usage_date')) }}

-- One row per pool share and receiver: the distribution engine (SPEC §7). Each pool of a
-- cluster, day, node and family follows its rule (a cluster's own rule, else the `*` rule,
-- else the default: `keep` for platform, infrastructure idle and unattributed pools, `owner`
-- for workload idle):
--   keep          everything to the platform owner;
--   separate      its own line, owned by nobody;
--   proportional  over the receivers by basis (direct, cpu, memory, storage or network);
--   even          1/n to each receiver;
--   fixed         listed owners get listed percentages (they sum to 100).
-- A hybrid share keeps that percentage with the platform owner first. Receivers are the
-- owners with direct cost above 0 in the scope (node, cluster or fleet) that day — the
-- unowned receiver when include_unowned, the platform owner (by its own usage) when
-- include_platform. A share is always booked to the cluster, day and family its pool came
-- from; a fleet spread only takes its weights fleet-wide. A pool whose basis is 0 becomes a
-- `separate` line: it never vanishes. `owner` pools (workload idle) are not distributed:
-- they stay with the workload's owner in fct_owner_costs_daily. Every scope holds the day, so a
-- day's run rebuilds that day only.
with

pools as (
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        pool,
        pool_cost
    from {{ ref('int_cost_pools_daily') }}
    where {{ day_range_filter('usage_date') }}
),

owner_costs as (
    select
        cluster_id,
        usage_date,
        node,
        team,
        cost_center,
        application,
        owner_status,
        direct_cost,
        platform_usage_cost,
        basis_cpu_cost,
        basis_memory_cost,
        basis_storage_cost,
        basis_network_cost
    from {{ ref('int_owner_costs_by_node_daily') }}
    where {{ day_range_filter('usage_date') }}
),

rules as (
    select
        cluster_id,
        pool,
        rule as distribution_rule,
        basis,
        hybrid_share,
        scope,
        include_unowned,
        include_platform
    from {{ ref('stg_config__distribution_rules') }}
),

fixed_shares as (
    select
        cluster_id,
        pool,
        team,
        cost_center,
        percent
    from {{ ref('stg_config__distribution_fixed_shares') }}
),

settings as (
    select
        platform_team,
        platform_cost_center
    from {{ ref('stg_config__settings') }}
),

pools_with_rules as (
    select
        pools.*,
        coalesce(
            own_rule.distribution_rule,
            any_rule.distribution_rule,
            case when pools.pool = 'workload_idle' then 'owner' else 'keep' end
        ) as distribution_rule,
        coalesce(own_rule.basis, any_rule.basis, 'direct') as basis,
        coalesce(own_rule.hybrid_share, any_rule.hybrid_share, 0) as hybrid_share,
        -- a pool without a node (fees, unattributed pools) spreads over its cluster at least
        case
            when
                coalesce(own_rule.scope, any_rule.scope, 'cluster') = 'node'
                and pools.node is null then 'cluster'
            else coalesce(own_rule.scope, any_rule.scope, 'cluster')
        end as scope,
        coalesce(own_rule.include_unowned, any_rule.include_unowned, true) as include_unowned,
        coalesce(own_rule.include_platform, any_rule.include_platform, false)
            as include_platform,
        case
            when own_rule.distribution_rule is not null then pools.cluster_id else '*'
        end as rule_cluster_id
    from pools
    left join rules as own_rule
        on pools.cluster_id = own_rule.cluster_id and pools.pool = own_rule.pool
    left join rules as any_rule
        on any_rule.cluster_id = '*' and pools.pool = any_rule.pool
),

active_pools as (
    select * from pools_with_rules
    where distribution_rule != 'owner'
),

-- receivers with their basis, at each scope
receivers as (
    select
        owner_costs.cluster_id,
        owner_costs.usage_date,
        owner_costs.node,
        owner_costs.team,
        owner_costs.cost_center,
        owner_costs.application,
        owner_costs.owner_status,
        false as is_platform_receiver,
        owner_costs.direct_cost,
        owner_costs.basis_cpu_cost,
        owner_costs.basis_memory_cost,
        owner_costs.basis_storage_cost,
        owner_costs.basis_network_cost
    from owner_costs
    union all
    select
        owner_costs.cluster_id,
        owner_costs.usage_date,
        owner_costs.node,
        settings.platform_team as team,
        settings.platform_cost_center as cost_center,
        cast(null as {{ dbt.type_string() }}) as application,
        'owned' as owner_status,
        true as is_platform_receiver,
        owner_costs.platform_usage_cost as direct_cost,
        owner_costs.platform_usage_cost as basis_cpu_cost,
        owner_costs.platform_usage_cost as basis_memory_cost,
        owner_costs.platform_usage_cost as basis_storage_cost,
        owner_costs.platform_usage_cost as basis_network_cost
    from owner_costs
    cross join settings
    where owner_costs.platform_usage_cost > 0
),

{% set scopes = {
    'node': ['cluster_id', 'usage_date', 'node'],
    'cluster': ['cluster_id', 'usage_date'],
    'fleet': ['usage_date'],
} %}

receiver_scopes as (
    {% for scope, keys in scopes.items() %}
        select
            '{{ scope }}' as scope,
            {% for key in ['cluster_id', 'node'] %}
                {% if key in keys %}{{ key }}{% else %}
                    cast(null as {{ dbt.type_string() }})
                {% endif %}
                    as scope_{{ key }},
            {% endfor %}
            usage_date,
            team,
            cost_center,
            application,
            owner_status,
            is_platform_receiver,
            {{ exact_sum('direct_cost') }} as direct_cost,
            {{ exact_sum('basis_cpu_cost') }} as basis_cpu_cost,
            {{ exact_sum('basis_memory_cost') }} as basis_memory_cost,
            {{ exact_sum('basis_storage_cost') }} as basis_storage_cost,
            {{ exact_sum('basis_network_cost') }} as basis_network_cost
        from receivers
        group by
            {{ keys | join(', ') }},
            team,
            cost_center,
            application,
            owner_status,
            is_platform_receiver
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

weighted as (
    select
        active_pools.cluster_id,
        active_pools.usage_date,
        active_pools.node,
        active_pools.cost_family,
        active_pools.pool,
        receiver_scopes.team,
        receiver_scopes.cost_center,
        receiver_scopes.application,
        receiver_scopes.owner_status,
        case
            when active_pools.distribution_rule = 'even' then 1.0
            when active_pools.basis = 'cpu' then receiver_scopes.basis_cpu_cost
            when active_pools.basis = 'memory' then receiver_scopes.basis_memory_cost
            when active_pools.basis = 'storage' then receiver_scopes.basis_storage_cost
            when active_pools.basis = 'network' then receiver_scopes.basis_network_cost
            else receiver_scopes.direct_cost
        end as weight
    from active_pools
    inner join receiver_scopes
        on
            active_pools.scope = receiver_scopes.scope
            and active_pools.usage_date = receiver_scopes.usage_date
            -- by the pool's scope, never by a null key: an owner whose only direct cost is on
            -- no node (a load balancer, a volume no pod mounted) is in no node's scope
            and (
                active_pools.scope = 'fleet'
                or active_pools.cluster_id = receiver_scopes.scope_cluster_id
            )
            and (active_pools.scope != 'node' or active_pools.node = receiver_scopes.scope_node)
    where
        active_pools.distribution_rule in ('proportional', 'even')
        and receiver_scopes.direct_cost > 0
        and (active_pools.include_unowned or receiver_scopes.owner_status = 'owned')
        and (active_pools.include_platform or not receiver_scopes.is_platform_receiver)
),

weight_totals as (
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        pool,
        {{ exact_sum('weight') }} as total_weight
    from weighted
    where weight > 0
    group by cluster_id, usage_date, node, cost_family, pool
),

fixed_pool_shares as (
    select
        active_pools.cluster_id,
        active_pools.usage_date,
        active_pools.node,
        active_pools.cost_family,
        active_pools.pool,
        fixed_shares.team,
        fixed_shares.cost_center,
        fixed_shares.percent
    from active_pools
    inner join fixed_shares
        on
            active_pools.rule_cluster_id = fixed_shares.cluster_id
            and active_pools.pool = fixed_shares.pool
    where active_pools.distribution_rule = 'fixed'
),

fixed_rule_keys as (
    select distinct
        cluster_id,
        pool
    from fixed_shares
),

-- how each pool resolves: distributed, kept, or separate (also when nothing can receive it)
pool_outcomes as (
    select
        active_pools.*,
        case
            when
                active_pools.distribution_rule in ('proportional', 'even')
                and weight_totals.total_weight is null
                then 'separate'
            when
                active_pools.distribution_rule = 'fixed' and fixed_rule_keys.pool is null
                then 'separate'
            else active_pools.distribution_rule
        end as outcome,
        weight_totals.total_weight
    from active_pools
    left join fixed_rule_keys
        on
            active_pools.rule_cluster_id = fixed_rule_keys.cluster_id
            and active_pools.pool = fixed_rule_keys.pool
    left join weight_totals
        on
            active_pools.cluster_id = weight_totals.cluster_id
            and active_pools.usage_date = weight_totals.usage_date
            and (
                active_pools.node = weight_totals.node
                or (active_pools.node is null and weight_totals.node is null)
            )
            and active_pools.cost_family = weight_totals.cost_family
            and active_pools.pool = weight_totals.pool
),

shares as (
    -- the spread part of proportional / even pools
    select
        pool_outcomes.cluster_id,
        pool_outcomes.usage_date,
        pool_outcomes.cost_family,
        pool_outcomes.pool,
        weighted.team,
        weighted.cost_center,
        weighted.application,
        weighted.owner_status,
        pool_outcomes.pool_cost * (1 - pool_outcomes.hybrid_share / 100.0)
        * weighted.weight / pool_outcomes.total_weight as share_cost
    from pool_outcomes
    inner join weighted
        on
            pool_outcomes.cluster_id = weighted.cluster_id
            and pool_outcomes.usage_date = weighted.usage_date
            and (
                pool_outcomes.node = weighted.node
                or (pool_outcomes.node is null and weighted.node is null)
            )
            and pool_outcomes.cost_family = weighted.cost_family
            and pool_outcomes.pool = weighted.pool
    where pool_outcomes.outcome in ('proportional', 'even') and weighted.weight > 0
    union all
    -- the spread part of fixed pools
    select
        pool_outcomes.cluster_id,
        pool_outcomes.usage_date,
        pool_outcomes.cost_family,
        pool_outcomes.pool,
        fixed_pool_shares.team,
        fixed_pool_shares.cost_center,
        cast(null as {{ dbt.type_string() }}) as application,
        'owned' as owner_status,
        pool_outcomes.pool_cost * (1 - pool_outcomes.hybrid_share / 100.0)
        * fixed_pool_shares.percent / 100.0 as share_cost
    from pool_outcomes
    inner join fixed_pool_shares
        on
            pool_outcomes.cluster_id = fixed_pool_shares.cluster_id
            and pool_outcomes.usage_date = fixed_pool_shares.usage_date
            and (
                pool_outcomes.node = fixed_pool_shares.node
                or (pool_outcomes.node is null and fixed_pool_shares.node is null)
            )
            and pool_outcomes.cost_family = fixed_pool_shares.cost_family
            and pool_outcomes.pool = fixed_pool_shares.pool
    where pool_outcomes.outcome = 'fixed'
    union all
    -- what the platform owner keeps: all of a `keep` pool, the hybrid share of the others
    select
        pool_outcomes.cluster_id,
        pool_outcomes.usage_date,
        pool_outcomes.cost_family,
        pool_outcomes.pool,
        settings.platform_team as team,
        settings.platform_cost_center as cost_center,
        cast(null as {{ dbt.type_string() }}) as application,
        'owned' as owner_status,
        case
            when pool_outcomes.outcome = 'keep' then pool_outcomes.pool_cost
            else pool_outcomes.pool_cost * pool_outcomes.hybrid_share / 100.0
        end as share_cost
    from pool_outcomes
    cross join settings
    where
        pool_outcomes.outcome = 'keep'
        or (
            pool_outcomes.outcome in ('proportional', 'even', 'fixed')
            and pool_outcomes.hybrid_share > 0
        )
    union all
    -- separate lines, owned by nobody
    select
        cluster_id,
        usage_date,
        cost_family,
        pool,
        cast(null as {{ dbt.type_string() }}) as team,
        cast(null as {{ dbt.type_string() }}) as cost_center,
        cast(null as {{ dbt.type_string() }}) as application,
        'separate' as owner_status,
        pool_cost as share_cost
    from pool_outcomes
    where outcome = 'separate'
),

final as (
    select
        cluster_id,
        usage_date,
        cost_family,
        pool,
        team,
        cost_center,
        application,
        owner_status,
        {{ exact_sum('share_cost') }} as share_cost
    from shares
    group by cluster_id, usage_date, cost_family, pool, team, cost_center, application, owner_status
)

select * from final
