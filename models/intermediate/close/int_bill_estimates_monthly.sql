{{ config(**incremental_by_period('month_start_date')) }}

-- One row per month, cluster, cost family and bill line: the line's estimate, i.e. its
-- post-distribution ledger cost over the month (SPEC §9). Owned cost goes to its cost center
-- (or team, by the `bill_line_grain` setting); everything else (not `owned`, or no value for
-- the key: null or `unallocated`) to `__unassigned__`.
with

owner_costs as (
    select
        cluster_id,
        usage_date,
        cost_family,
        team,
        cost_center,
        owner_status,
        total_cost
    from {{ ref('fct_owner_costs_daily') }}
    where {{ close_month_filter('usage_date') }}
),

settings as (
    select bill_line_grain from {{ ref('stg_config__settings') }}
),

keyed as (
    select
        owner_costs.cluster_id,
        owner_costs.cost_family,
        owner_costs.usage_date,
        cast({{ dbt.date_trunc('month', 'owner_costs.usage_date') }} as date) as month_start_date,
        -- Summed as exact decimals, so the estimate does not depend on the order rows are
        -- added in (a double sum can differ in its last bits from run to run).
        cast(owner_costs.total_cost as decimal(38, 12)) as total_cost,
        case
            when owner_costs.owner_status <> 'owned' then null
            when settings.bill_line_grain = 'team' then owner_costs.team
            else owner_costs.cost_center
        end as owner_key
    from owner_costs
    cross join settings
),

lined as (
    select
        cluster_id,
        cost_family,
        usage_date,
        month_start_date,
        total_cost,
        -- Owner columns say `unallocated` when no rule gave a value (SPEC §6): no line key.
        case
            when owner_key is null or owner_key = 'unallocated' then '__unassigned__'
            else owner_key
        end as line_key
    from keyed
),

final as (
    select
        {{ dbt.concat([year_month('month_start_date'), "'|'", 'cluster_id', "'|'",
            'cost_family', "'|'", 'line_key']) }} as bill_line_id,
        {{ year_month('month_start_date') }} as bill_month,
        month_start_date,
        cluster_id,
        cost_family,
        line_key,
        {{ dbt.concat(['cluster_id', "'|'", 'cost_family', "'|'", 'line_key']) }} as line_id,
        line_key = '__unassigned__' as is_unassigned,
        cast(sum(total_cost) as decimal(38, 6)) as estimated_cost,
        count(distinct usage_date) as days_with_cost
    from lined
    group by
        month_start_date,
        cluster_id,
        cost_family,
        line_key
)

select * from final
