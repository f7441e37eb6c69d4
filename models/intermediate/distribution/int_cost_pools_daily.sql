{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day, node (null where a pool has no node), cost family and pool: the
-- cost no user workload claimed directly, which the distribution engine hands out (SPEC §7).
-- platform: platform pods' whole cost, the unclaimed rest of control-plane / infra nodes and
-- managed control-plane fees; infrastructure_idle: worker node-hours nobody claimed;
-- workload_idle: user pods' requested-but-unused cost; unattributed_storage: PVs no claim used
-- that day; unattributed_network: node data transfer (only with
-- network.include_data_transfer). Unallocated resources are never a pool. A day's pools come
-- from that day's rows only, so a day's run rebuilds that day only.
with

owner_costs as (
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        workload_idle_cost,
        platform_usage_cost
    from {{ ref('int_owner_costs_by_node_daily') }}
    where {{ day_range_filter('usage_date') }}
),

node_hours as (
    select
        cluster_id,
        usage_date,
        node,
        is_platform_node,
        unclaimed_cost
    from {{ ref('int_node_hours_allocated') }}
    where {{ day_range_filter('usage_date') }}
),

usage_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
    where {{ day_range_filter('usage_date') }}
),

-- On a day without usage these lines are unallocated `no_usage` (int_unallocated_costs_daily).
scoped_lines as (
    select
        scoped_lines.cluster_id,
        scoped_lines.charge_date,
        scoped_lines.scope_status,
        scoped_lines.effective_cost
    from {{ ref('int_billing_lines_scoped') }} as scoped_lines
    inner join usage_days
        on
            scoped_lines.cluster_id = usage_days.cluster_id
            and scoped_lines.charge_date = usage_days.usage_date
    where scoped_lines.scope_status in ('platform_fee', 'unattributed_network')
),

volume_costs as (
    select
        cluster_id,
        usage_date,
        volume_cost
    from {{ ref('int_volume_costs_daily') }}
    where is_unattributed and {{ day_range_filter('usage_date') }}
),

pooled as (
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        'platform' as pool,
        platform_usage_cost as pool_cost
    from owner_costs
    union all
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        'workload_idle' as pool,
        workload_idle_cost as pool_cost
    from owner_costs
    union all
    select
        cluster_id,
        usage_date,
        node,
        'compute' as cost_family,
        case when is_platform_node then 'platform' else 'infrastructure_idle' end as pool,
        unclaimed_cost as pool_cost
    from node_hours
    union all
    select
        cluster_id,
        charge_date as usage_date,
        cast(null as {{ dbt.type_string() }}) as node,
        case when scope_status = 'platform_fee' then 'compute' else 'network' end
            as cost_family,
        case when scope_status = 'platform_fee' then 'platform' else 'unattributed_network' end
            as pool,
        cast(effective_cost as double) as pool_cost
    from scoped_lines
    union all
    select
        cluster_id,
        usage_date,
        cast(null as {{ dbt.type_string() }}) as node,
        'storage' as cost_family,
        'unattributed_storage' as pool,
        volume_cost as pool_cost
    from volume_costs
),

final as (
    select
        cluster_id,
        usage_date,
        node,
        cost_family,
        pool,
        {{ exact_sum('pool_cost') }} as pool_cost
    from pooled
    group by cluster_id, usage_date, node, cost_family, pool
    having {{ exact_sum('pool_cost') }} != 0
)

select * from final
