-- One row per cluster, UTC day and team: the metrics everyone asks for, computed once so a BI
-- tool and an analyst get the same answer. Every money column is additive across teams,
-- clusters and days; each `_ratio` column is that row's own ratio (0 to 1, six decimals), so
-- roll up by dividing the sums (or use rpt_metrics_cluster_daily / the dbt metrics), never by
-- averaging the ratios.
with

owner_costs as (
    select
        cluster_id,
        usage_date,
        cost_family,
        team,
        owner_status,
        direct_cost,
        workload_idle_cost,
        platform_share_cost,
        infrastructure_idle_share_cost,
        workload_idle_share_cost,
        unattributed_storage_share_cost,
        unattributed_network_share_cost,
        unallocated_cost,
        total_cost
    from {{ ref('fct_owner_costs_daily') }}
),

reconciliation as (
    select
        cluster_id,
        usage_date,
        cost_in_scope,
        reconciled_cost,
        reconciled_ratio
    from {{ ref('fct_reconciliation_daily') }}
),

team_days as (
    select
        cluster_id,
        usage_date,
        coalesce(team, 'unallocated') as team,
        sum(total_cost) as total_cost,
        sum(case when cost_family = 'compute' then total_cost else 0 end) as compute_cost,
        sum(case when cost_family = 'storage' then total_cost else 0 end) as storage_cost,
        sum(case when cost_family = 'network' then total_cost else 0 end) as network_cost,
        sum(direct_cost) as direct_cost,
        sum(platform_share_cost) as platform_share_cost,
        sum(
            workload_idle_cost + infrastructure_idle_share_cost + workload_idle_share_cost
        ) as idle_cost,
        sum(
            unattributed_storage_share_cost + unattributed_network_share_cost
        ) as unattributed_cost,
        sum(unallocated_cost) as unallocated_cost,
        -- `keep` gives shared cost to the platform owner, so it counts as owned (SPEC §8).
        sum(case when owner_status = 'owned' then total_cost else 0 end) as owned_cost
    from owner_costs
    group by
        cluster_id,
        usage_date,
        coalesce(team, 'unallocated')
),

-- Reconciled-to-invoice is a cluster-day figure; each team carries its cost's part of it (by
-- the exact ratio, not the rounded one), so the team rows sum back to the cluster's reconciled
-- cost exactly.
final as (
    select
        team_days.cluster_id,
        team_days.usage_date,
        cast({{ dbt.date_trunc('month', 'team_days.usage_date') }} as date) as usage_month,
        team_days.team,
        team_days.total_cost,
        team_days.compute_cost,
        team_days.storage_cost,
        team_days.network_cost,
        team_days.direct_cost,
        team_days.platform_share_cost,
        team_days.idle_cost,
        team_days.unattributed_cost,
        team_days.unallocated_cost,
        team_days.owned_cost,
        team_days.total_cost * coalesce(
            {{ safe_divide('reconciliation.reconciled_cost', 'reconciliation.cost_in_scope') }}, 0
        ) as reconciled_cost,
        {{ rounded_ratio('team_days.idle_cost', 'team_days.total_cost') }} as idle_ratio,
        {{ rounded_ratio('team_days.platform_share_cost', 'team_days.total_cost') }}
            as platform_share_ratio,
        {{ rounded_ratio('team_days.owned_cost', 'team_days.total_cost') }}
            as ownership_coverage_ratio,
        reconciliation.reconciled_ratio
    from team_days
    left join reconciliation
        on
            team_days.cluster_id = reconciliation.cluster_id
            and team_days.usage_date = reconciliation.usage_date
)

select * from final
