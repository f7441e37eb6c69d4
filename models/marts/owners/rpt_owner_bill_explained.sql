{{ config(materialized='view') }}

-- One row per month, bill line and owner (team, cost center, application, owner status) that
-- has cost on it: what the owner's part of the line is made of (direct used cost, its own
-- workload idle, and each distributed share, from the ledger), its estimate, the slice's
-- factor, and its part of the line's billed amount in cents. The billed amount of the bill
-- of record (`fct_bill_lines_monthly`: sealed, else the draft) is split over the line's owners
-- by their estimates with the close's own rule (`allocate_cents`: rounded down, leftover cents
-- to the largest, ties to the smallest owner key), so the owners' parts of a line add up to
-- the line's billed_cost exactly, and any sum by team, cost center or application adds up to
-- the cent. A view, like the bill, so a seal shows here as soon as it is written.
with

owner_costs as (
    select
        cluster_id,
        usage_date,
        cost_family,
        team,
        cost_center,
        application,
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

settings as (
    select bill_line_grain from {{ ref('stg_config__settings') }}
),

bill_lines as (
    select
        {{ year_month('bill_month') }} as bill_month,
        bill_month as month_start_date,
        bill_state,
        bill_id,
        cluster_id,
        cost_family,
        line_key,
        line_id,
        is_unassigned,
        estimated_cost,
        billed_cost,
        factor,
        basis,
        is_reconciled
    from {{ ref('fct_bill_lines_monthly') }}
),

-- the same line key as int_bill_estimates_monthly gives each owner row
keyed as (
    select
        cast({{ dbt.date_trunc('month', 'owner_costs.usage_date') }} as date) as month_start_date,
        owner_costs.cluster_id,
        owner_costs.cost_family,
        owner_costs.team,
        owner_costs.cost_center,
        owner_costs.application,
        owner_costs.owner_status,
        case
            when owner_costs.owner_status <> 'owned' then '__unassigned__'
            when settings.bill_line_grain = 'team' and owner_costs.team <> 'unallocated'
                then owner_costs.team
            when settings.bill_line_grain <> 'team' and owner_costs.cost_center <> 'unallocated'
                then owner_costs.cost_center
            else '__unassigned__'
        end as line_key,
        cast(owner_costs.direct_cost as decimal(38, 12)) as direct_cost,
        cast(owner_costs.workload_idle_cost as decimal(38, 12)) as workload_idle_cost,
        cast(owner_costs.platform_share_cost as decimal(38, 12)) as platform_share_cost,
        cast(owner_costs.infrastructure_idle_share_cost as decimal(38, 12))
            as infrastructure_idle_share_cost,
        cast(
            owner_costs.workload_idle_share_cost
            + owner_costs.unattributed_storage_share_cost
            + owner_costs.unattributed_network_share_cost
            as decimal(38, 12)
        ) as other_pools_share_cost,
        cast(owner_costs.unallocated_cost as decimal(38, 12)) as unallocated_cost,
        cast(owner_costs.total_cost as decimal(38, 12)) as total_cost
    from owner_costs
    cross join settings
),

owner_months as (
    select
        month_start_date,
        cluster_id,
        cost_family,
        line_key,
        {{ dbt.concat(['cluster_id', "'|'", 'cost_family', "'|'", 'line_key']) }} as line_id,
        team,
        cost_center,
        application,
        owner_status,
        {{ dbt.concat(['team', "'|'", 'cost_center', "'|'", 'application', "'|'",
            'owner_status']) }} as owner_key,
        false as is_filler,
        cast(sum(direct_cost) as decimal(38, 6)) as direct_cost,
        cast(sum(workload_idle_cost) as decimal(38, 6)) as workload_idle_cost,
        cast(sum(platform_share_cost) as decimal(38, 6)) as platform_share_cost,
        cast(sum(infrastructure_idle_share_cost) as decimal(38, 6))
            as infrastructure_idle_share_cost,
        cast(sum(other_pools_share_cost) as decimal(38, 6)) as other_pools_share_cost,
        cast(sum(unallocated_cost) as decimal(38, 6)) as unallocated_cost,
        cast(sum(total_cost) as decimal(38, 6)) as estimated_cost
    from keyed
    group by
        month_start_date,
        cluster_id,
        cost_family,
        line_key,
        team,
        cost_center,
        application,
        owner_status
),

-- One zero-estimate row per line, so a line whose owners weigh nothing (an invoice with
-- nothing attributed, or a ledger re-run since the seal) still has a row to take its cents.
fillers as (
    select
        month_start_date,
        cluster_id,
        cost_family,
        line_key,
        line_id,
        'unallocated' as team,
        'unallocated' as cost_center,
        'unallocated' as application,
        'no_ledger_cost' as owner_status,
        '~no_ledger_cost' as owner_key,
        true as is_filler,
        cast(0 as decimal(38, 6)) as direct_cost,
        cast(0 as decimal(38, 6)) as workload_idle_cost,
        cast(0 as decimal(38, 6)) as platform_share_cost,
        cast(0 as decimal(38, 6)) as infrastructure_idle_share_cost,
        cast(0 as decimal(38, 6)) as other_pools_share_cost,
        cast(0 as decimal(38, 6)) as unallocated_cost,
        cast(0 as decimal(38, 6)) as estimated_cost
    from bill_lines
),

owner_parts as (
    select
        owners.*,
        bill_lines.bill_month,
        bill_lines.bill_state,
        bill_lines.bill_id,
        bill_lines.estimated_cost as line_estimated_cost,
        bill_lines.billed_cost as line_billed_cost,
        bill_lines.factor,
        bill_lines.basis,
        bill_lines.is_reconciled
    from (
        select * from owner_months
        union all
        select * from fillers
    ) as owners
    inner join bill_lines
        on
            owners.month_start_date = bill_lines.month_start_date
            and owners.cluster_id = bill_lines.cluster_id
            and owners.cost_family = bill_lines.cost_family
            and owners.line_id = bill_lines.line_id
),

allocated as (
    {{ allocate_cents(
        'owner_parts',
        ['month_start_date', 'cluster_id', 'cost_family', 'line_id'],
        line_id='owner_key',
        estimate='estimated_cost',
        target='line_billed_cost',
        is_unassigned='is_filler',
    ) }}
),

final as (
    select
        cast(
            {{ dbt.concat(['bill_month', "'|'", 'line_id', "'|'", 'owner_key']) }}
            as {{ dbt.type_string() }}
        ) as owner_line_id,
        cast(month_start_date as date) as bill_month,
        cast(bill_state as {{ dbt.type_string() }}) as bill_state,
        cast(bill_id as {{ dbt.type_string() }}) as bill_id,
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(cost_family as {{ dbt.type_string() }}) as cost_family,
        cast(line_id as {{ dbt.type_string() }}) as line_id,
        cast(line_key as {{ dbt.type_string() }}) as line_key,
        cast(team as {{ dbt.type_string() }}) as team,
        cast(cost_center as {{ dbt.type_string() }}) as cost_center,
        cast(application as {{ dbt.type_string() }}) as application,
        cast(owner_status as {{ dbt.type_string() }}) as owner_status,
        cast(direct_cost as decimal(38, 6)) as direct_cost,
        cast(workload_idle_cost as decimal(38, 6)) as workload_idle_cost,
        cast(platform_share_cost as decimal(38, 6)) as platform_share_cost,
        cast(infrastructure_idle_share_cost as decimal(38, 6))
            as infrastructure_idle_share_cost,
        cast(other_pools_share_cost as decimal(38, 6)) as other_pools_share_cost,
        cast(unallocated_cost as decimal(38, 6)) as unallocated_cost,
        cast(estimated_cost as decimal(38, 6)) as estimated_cost,
        cast(line_estimated_cost as decimal(38, 6)) as line_estimated_cost,
        cast(factor as decimal(38, 10)) as factor,
        cast(basis as {{ dbt.type_string() }}) as basis,
        cast(is_reconciled as boolean) as is_reconciled,
        cast(billed_cost as decimal(38, 3)) as billed_cost,
        cast(line_billed_cost as decimal(38, 3)) as line_billed_cost,
        cast(is_carry_cent as boolean) as is_carry_cent
    from allocated
    where not is_filler or billed_cost <> 0
)

select * from final
