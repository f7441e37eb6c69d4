-- One row per cluster and UTC day: the billed cost in scope and the ledger's split of the
-- day's cost into direct, workload idle, platform, infrastructure idle, unattributed and
-- unallocated (SPEC §5). These add up to ledger_cost, which equals the billed cost in scope
-- plus what was priced at an estimate or from the rate card.
with

cluster_costs as (
    select * from {{ ref('int_cluster_costs_daily') }}
),

final as (
    select
        cluster_id,
        usage_date,
        billed_cost_in_scope,
        estimated_cost,
        rate_card_cost,
        direct_cost,
        workload_idle_cost,
        platform_cost,
        infrastructure_idle_cost,
        unattributed_storage_cost,
        unattributed_network_cost,
        unallocated_cost,
        direct_cost
        + workload_idle_cost
        + platform_cost
        + infrastructure_idle_cost
        + unattributed_storage_cost
        + unattributed_network_cost
        + unallocated_cost as ledger_cost,
        cast(overcommitted_node_hours as integer) as overcommitted_node_hours
    from cluster_costs
)

select * from final
