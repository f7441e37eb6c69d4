-- One row per threshold of a budget of either kind (allocation or owner), keyed like
-- stg_config_allocations__budgets.
with

allocation_thresholds as (
    select
        allocation_name,
        threshold_percent,
        use_estimated
    from {{ source('config_allocations', 'cloud_charge_thresholds') }}
),

owner_thresholds as (
    select
        budget_name,
        threshold_percent,
        use_estimated
    from {{ source('config_allocations', 'owner_budget_thresholds') }}
),

unioned as (
    select
        'allocation:' || allocation_name as budget_name,
        threshold_percent,
        use_estimated
    from allocation_thresholds
    union all
    select
        budget_name,
        threshold_percent,
        use_estimated
    from owner_thresholds
),

final as (
    select
        cast(budget_name as {{ dbt.type_string() }}) as budget_name,
        cast(threshold_percent as double) as threshold_percent,
        cast(use_estimated as boolean) as use_estimated
    from unioned
)

select * from final
