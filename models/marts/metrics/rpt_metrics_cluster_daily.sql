-- One row per cluster and UTC day: the team metrics of rpt_metrics_daily summed over teams,
-- and the daily figures as ratios of those sums (0 to 1, six decimals). idle_ratio,
-- ownership_coverage_ratio and reconciled_ratio equal fct_reconciliation_daily's
-- idle_cost / cost_in_scope, ownership_coverage_ratio and reconciled_ratio (within 0.000001):
-- one definition, two views.
with

team_metrics as (
    select
        cluster_id,
        usage_date,
        usage_month,
        team,
        total_cost,
        compute_cost,
        storage_cost,
        network_cost,
        direct_cost,
        platform_share_cost,
        idle_cost,
        unattributed_cost,
        unallocated_cost,
        owned_cost,
        reconciled_cost
    from {{ ref('rpt_metrics_daily') }}
),

cluster_days as (
    select
        cluster_id,
        usage_date,
        usage_month,
        count(distinct case when team <> 'unallocated' then team end) as team_count,
        sum(total_cost) as cost_in_scope,
        sum(compute_cost) as compute_cost,
        sum(storage_cost) as storage_cost,
        sum(network_cost) as network_cost,
        sum(direct_cost) as direct_cost,
        sum(platform_share_cost) as platform_cost,
        sum(idle_cost) as idle_cost,
        sum(unattributed_cost) as unattributed_cost,
        sum(unallocated_cost) as unallocated_cost,
        sum(owned_cost) as owned_cost,
        sum(reconciled_cost) as reconciled_cost
    from team_metrics
    group by
        cluster_id,
        usage_date,
        usage_month
),

final as (
    select
        cluster_id,
        usage_date,
        usage_month,
        team_count,
        cost_in_scope,
        compute_cost,
        storage_cost,
        network_cost,
        direct_cost,
        platform_cost,
        idle_cost,
        unattributed_cost,
        unallocated_cost,
        owned_cost,
        reconciled_cost,
        {{ rounded_ratio('idle_cost', 'cost_in_scope') }} as idle_ratio,
        {{ rounded_ratio('platform_cost', 'cost_in_scope') }} as platform_ratio,
        {{ rounded_ratio('owned_cost', 'cost_in_scope') }} as ownership_coverage_ratio,
        {{ rounded_ratio('reconciled_cost', 'cost_in_scope') }} as reconciled_ratio
    from cluster_days
)

select * from final
