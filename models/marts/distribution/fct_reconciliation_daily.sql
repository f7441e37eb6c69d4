-- One row per cluster and UTC day: the two daily figures of SPEC §8 on one scope and cost
-- basis. Reconciled to invoice = (ledger cost priced from the current billing lines or the
-- rate card, unallocated included) / in-scope cost; it is below 100% while nodes are on
-- estimates or the ledger was priced from lines since restated. Ownership coverage = cost that
-- resolves to a team or cost center after distribution / in-scope cost (`keep` gives the
-- platform owner, so platform cost counts; separate pools, unowned and unallocated do not).
-- A day is complete (SPEC §4) when usage and billing are both in and nothing is on an
-- estimate, or when it has neither usage nor in-scope billing (nothing to allocate); a day
-- with billing but no usage awaits usage through the repair window (as of var `as_of`) and is
-- complete after it, its lines unallocated with reason `no_usage`.
with

cluster_costs as (
    select * from {{ ref('int_cluster_costs_daily') }}
),

owner_costs as (
    select
        cluster_id,
        usage_date,
        owner_status,
        total_cost
    from {{ ref('fct_owner_costs_daily') }}
),

node_costs as (
    select
        cluster_id,
        usage_date,
        provider,
        pricing_basis
    from {{ ref('int_node_costs_daily') }}
),

cluster_days_billed as (
    select
        cluster_id,
        usage_date,
        is_billed
    from {{ ref('int_cluster_days_billed') }}
),

scoped_line_counts as (
    select
        cluster_id,
        charge_date as usage_date,
        count(*) as billing_line_count
    from {{ ref('int_billing_lines_scoped') }}
    group by cluster_id, charge_date
),

settings as (
    select
        repair_window_days,
        {{ close_as_of_date() }} as as_of_date
    from {{ ref('stg_config__settings') }}
),

unallocated as (
    select
        cluster_id,
        usage_date,
        resource_key,
        min(resource_id) as resource_id,
        sum(unallocated_cost) as unallocated_cost
    from {{ ref('int_unallocated_costs_daily') }}
    group by cluster_id, usage_date, resource_key
),

owned as (
    select
        cluster_id,
        usage_date,
        sum(case when owner_status = 'owned' then total_cost else 0 end) as owned_cost
    from owner_costs
    group by cluster_id, usage_date
),

match_rates as (
    select
        cluster_id,
        usage_date,
        count(*) as nodes_ran,
        sum(case when pricing_basis = 'bill' then 1 else 0 end) as nodes_priced_from_bill,
        sum(case when pricing_basis in ('estimate', 'unpriced') then 1 else 0 end)
            as nodes_on_estimate,
        max(case when provider = 'on_prem' then 1 else 0 end) = 1 as is_rate_card_cluster
    from node_costs
    group by cluster_id, usage_date
),

-- up to 200 unallocated resource IDs (as the bill writes them) per cluster-day, largest cost
-- first, ties by the normalized key
unallocated_ranked as (
    select
        *,
        row_number() over (
            partition by cluster_id, usage_date order by unallocated_cost desc, resource_key asc
        ) as cost_rank
    from unallocated
),

unallocated_lists as (
    select
        cluster_id,
        usage_date,
        count(*) as unallocated_resource_count,
        {{ dbt.listagg(
            "case when cost_rank <= 200 then resource_id end",
            "','",
            "order by cost_rank",
        ) }} as unallocated_resource_ids
    from unallocated_ranked
    group by cluster_id, usage_date
),

final as (
    select
        cluster_costs.cluster_id,
        cluster_costs.usage_date,
        cluster_costs.billed_cost_in_scope
        + cluster_costs.estimated_cost
        + cluster_costs.rate_card_cost as cost_in_scope,
        cluster_costs.billed_cost_in_scope,
        cluster_costs.estimated_cost,
        cluster_costs.rate_card_cost,
        cluster_costs.direct_cost,
        cluster_costs.platform_cost as shared_cost,
        cluster_costs.workload_idle_cost + cluster_costs.infrastructure_idle_cost as idle_cost,
        cluster_costs.workload_idle_cost,
        cluster_costs.infrastructure_idle_cost,
        cluster_costs.unattributed_storage_cost + cluster_costs.unattributed_network_cost
            as unattributed_cost,
        cluster_costs.unallocated_cost,
        cluster_costs.direct_cost + cluster_costs.platform_cost
        + cluster_costs.workload_idle_cost + cluster_costs.infrastructure_idle_cost
        + cluster_costs.unattributed_storage_cost + cluster_costs.unattributed_network_cost
        + cluster_costs.unallocated_cost - cluster_costs.estimated_cost as reconciled_cost,
        coalesce(owned.owned_cost, 0) as owned_cost,
        {{ rounded_ratio(
            'cluster_costs.direct_cost + cluster_costs.platform_cost
            + cluster_costs.workload_idle_cost + cluster_costs.infrastructure_idle_cost
            + cluster_costs.unattributed_storage_cost + cluster_costs.unattributed_network_cost
            + cluster_costs.unallocated_cost - cluster_costs.estimated_cost',
            'cluster_costs.billed_cost_in_scope + cluster_costs.estimated_cost
            + cluster_costs.rate_card_cost'
        ) }} as reconciled_ratio,
        {{ rounded_ratio(
            'coalesce(owned.owned_cost, 0)',
            'cluster_costs.billed_cost_in_scope + cluster_costs.estimated_cost
            + cluster_costs.rate_card_cost'
        ) }} as ownership_coverage_ratio,
        cast(coalesce(match_rates.nodes_ran, 0) as bigint) as nodes_ran,
        cast(coalesce(match_rates.nodes_priced_from_bill, 0) as bigint) as nodes_priced_from_bill,
        case
            when not coalesce(match_rates.is_rate_card_cluster, false)
                then
                    {{ rounded_ratio(
                        'match_rates.nodes_priced_from_bill', 'match_rates.nodes_ran'
                    ) }}
        end as match_ratio,
        case
            when coalesce(match_rates.is_rate_card_cluster, false) then true
            else coalesce(
                match_rates.nodes_priced_from_bill >= 0.9 * match_rates.nodes_ran, false
            )
        end as is_match_rate_healthy,
        cast(coalesce(unallocated_lists.unallocated_resource_count, 0) as bigint)
            as unallocated_resource_count,
        unallocated_lists.unallocated_resource_ids,
        coalesce(match_rates.nodes_ran, 0) > 0 as has_usage,
        coalesce(match_rates.is_rate_card_cluster, false)
        or coalesce(cluster_days_billed.is_billed, false) as has_billing,
        coalesce(scoped_line_counts.billing_line_count, 0) > 0 as has_in_scope_billing,
        coalesce(match_rates.nodes_ran, 0) = 0
        and coalesce(scoped_line_counts.billing_line_count, 0) > 0 as is_awaiting_usage,
        case
            when coalesce(match_rates.nodes_ran, 0) > 0
                then
                    (
                        coalesce(match_rates.is_rate_card_cluster, false)
                        or coalesce(cluster_days_billed.is_billed, false)
                    )
                    and coalesce(match_rates.nodes_on_estimate, 0) = 0
            when coalesce(scoped_line_counts.billing_line_count, 0) = 0 then true
            else
                {{ dbt.datediff('cluster_costs.usage_date', 'settings.as_of_date', 'day') }}
                > settings.repair_window_days
        end as is_complete
    from cluster_costs
    left join owned
        on
            cluster_costs.cluster_id = owned.cluster_id
            and cluster_costs.usage_date = owned.usage_date
    left join match_rates
        on
            cluster_costs.cluster_id = match_rates.cluster_id
            and cluster_costs.usage_date = match_rates.usage_date
    left join unallocated_lists
        on
            cluster_costs.cluster_id = unallocated_lists.cluster_id
            and cluster_costs.usage_date = unallocated_lists.usage_date
    left join cluster_days_billed
        on
            cluster_costs.cluster_id = cluster_days_billed.cluster_id
            and cluster_costs.usage_date = cluster_days_billed.usage_date
    left join scoped_line_counts
        on
            cluster_costs.cluster_id = scoped_line_counts.cluster_id
            and cluster_costs.usage_date = scoped_line_counts.usage_date
    cross join settings
)

select * from final
