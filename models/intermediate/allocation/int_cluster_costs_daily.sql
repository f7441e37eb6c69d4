-- One row per cluster and UTC day: the day's cost split into the five disjoint categories of
-- SPEC §5 — direct, workload idle, platform, infrastructure idle, unallocated — plus
-- unattributed storage and network (the §7 pools no claim or object owns), beside the
-- in-scope billed cost and the costs priced otherwise (estimates, rate card).
with

objects as (
    select
        cluster_id,
        usage_date,
        is_platform,
        used_cost,
        workload_idle_cost,
        total_cost
    from {{ ref('int_cost_objects_daily') }}
),

node_hours as (
    select
        cluster_id,
        usage_date,
        is_platform_node,
        unclaimed_cost,
        is_overcommitted
    from {{ ref('int_node_hours_allocated') }}
),

node_costs as (
    select
        cluster_id,
        usage_date,
        pricing_basis,
        node_cost
    from {{ ref('int_node_costs_daily') }}
),

volume_costs as (
    select
        cluster_id,
        usage_date,
        pricing_basis,
        is_unattributed,
        volume_cost
    from {{ ref('int_volume_costs_daily') }}
),

load_balancer_costs as (
    select
        cluster_id,
        usage_date,
        pricing_basis,
        load_balancer_cost
    from {{ ref('int_load_balancer_costs_daily') }}
),

scoped_lines as (
    select
        cluster_id,
        charge_date,
        scope_status,
        effective_cost
    from {{ ref('int_billing_lines_scoped') }}
),

-- On a day without usage every in-scope line is unallocated `no_usage`, so the pools below
-- take lines from days with usage only.
usage_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
),

unallocated as (
    select
        cluster_id,
        usage_date,
        unallocated_cost
    from {{ ref('int_unallocated_costs_daily') }}
),

object_totals as (
    select
        cluster_id,
        usage_date,
        {{ exact_sum('case when not is_platform then used_cost else 0 end') }} as direct_cost,
        {{ exact_sum('case when not is_platform then workload_idle_cost else 0 end') }}
            as workload_idle_cost,
        {{ exact_sum('case when is_platform then total_cost else 0 end') }}
            as platform_object_cost
    from objects
    group by cluster_id, usage_date
),

node_hour_totals as (
    select
        cluster_id,
        usage_date,
        {{ exact_sum('case when is_platform_node then unclaimed_cost else 0 end') }}
            as platform_node_unclaimed_cost,
        {{ exact_sum('case when not is_platform_node then unclaimed_cost else 0 end') }}
            as infrastructure_idle_cost,
        sum(case when is_overcommitted then 1 else 0 end) as overcommitted_node_hours
    from node_hours
    group by cluster_id, usage_date
),

line_totals as (
    select
        scoped_lines.cluster_id,
        scoped_lines.charge_date as usage_date,
        cast(sum(scoped_lines.effective_cost) as double) as billed_cost_in_scope,
        cast(
            sum(
                case
                    when
                        scoped_lines.scope_status = 'platform_fee'
                        and usage_days.usage_date is not null
                        then scoped_lines.effective_cost
                    else 0
                end
            ) as double
        ) as control_plane_fee_cost,
        cast(
            sum(
                case
                    when
                        scoped_lines.scope_status = 'unattributed_network'
                        and usage_days.usage_date is not null
                        then scoped_lines.effective_cost
                    else 0
                end
            )
            as double
        ) as unattributed_network_cost
    from scoped_lines
    left join usage_days
        on
            scoped_lines.cluster_id = usage_days.cluster_id
            and scoped_lines.charge_date = usage_days.usage_date
    group by scoped_lines.cluster_id, scoped_lines.charge_date
),

-- what the ledger priced other than from the bill
other_pricing as (
    select
        cluster_id,
        usage_date,
        {{ exact_sum(
            "case when pricing_basis in ('estimate', 'unpriced') then priced_cost else 0 end"
        ) }} as estimated_cost,
        {{ exact_sum("case when pricing_basis = 'rate_card' then priced_cost else 0 end") }}
            as rate_card_cost
    from (
        select
            cluster_id,
            usage_date,
            pricing_basis,
            node_cost as priced_cost
        from node_costs
        union all
        select
            cluster_id,
            usage_date,
            pricing_basis,
            volume_cost as priced_cost
        from volume_costs
        union all
        select
            cluster_id,
            usage_date,
            pricing_basis,
            load_balancer_cost as priced_cost
        from load_balancer_costs
    ) as priced
    group by cluster_id, usage_date
),

unattributed_storage as (
    select
        cluster_id,
        usage_date,
        {{ exact_sum('volume_cost') }} as unattributed_storage_cost
    from volume_costs
    where is_unattributed
    group by cluster_id, usage_date
),

unallocated_totals as (
    select
        cluster_id,
        usage_date,
        {{ exact_sum('unallocated_cost') }} as unallocated_cost
    from unallocated
    group by cluster_id, usage_date
),

cluster_days as (
    select
        cluster_id,
        usage_date
    from object_totals
    union
    select
        cluster_id,
        usage_date
    from node_hour_totals
    union
    select
        cluster_id,
        usage_date
    from line_totals
    union
    select
        cluster_id,
        usage_date
    from other_pricing
),

final as (
    select
        cluster_days.cluster_id,
        cluster_days.usage_date,
        coalesce(line_totals.billed_cost_in_scope, 0) as billed_cost_in_scope,
        coalesce(other_pricing.estimated_cost, 0) as estimated_cost,
        coalesce(other_pricing.rate_card_cost, 0) as rate_card_cost,
        coalesce(object_totals.direct_cost, 0) as direct_cost,
        coalesce(object_totals.workload_idle_cost, 0) as workload_idle_cost,
        coalesce(object_totals.platform_object_cost, 0)
        + coalesce(node_hour_totals.platform_node_unclaimed_cost, 0)
        + coalesce(line_totals.control_plane_fee_cost, 0) as platform_cost,
        coalesce(node_hour_totals.infrastructure_idle_cost, 0) as infrastructure_idle_cost,
        coalesce(unattributed_storage.unattributed_storage_cost, 0)
            as unattributed_storage_cost,
        coalesce(line_totals.unattributed_network_cost, 0) as unattributed_network_cost,
        coalesce(unallocated_totals.unallocated_cost, 0) as unallocated_cost,
        coalesce(node_hour_totals.overcommitted_node_hours, 0) as overcommitted_node_hours
    from cluster_days
    left join object_totals
        on
            cluster_days.cluster_id = object_totals.cluster_id
            and cluster_days.usage_date = object_totals.usage_date
    left join node_hour_totals
        on
            cluster_days.cluster_id = node_hour_totals.cluster_id
            and cluster_days.usage_date = node_hour_totals.usage_date
    left join line_totals
        on
            cluster_days.cluster_id = line_totals.cluster_id
            and cluster_days.usage_date = line_totals.usage_date
    left join other_pricing
        on
            cluster_days.cluster_id = other_pricing.cluster_id
            and cluster_days.usage_date = other_pricing.usage_date
    left join unattributed_storage
        on
            cluster_days.cluster_id = unattributed_storage.cluster_id
            and cluster_days.usage_date = unattributed_storage.usage_date
    left join unallocated_totals
        on
            cluster_days.cluster_id = unallocated_totals.cluster_id
            and cluster_days.usage_date = unallocated_totals.usage_date
)

select * from final
