-- The one row of scalar settings.
with

source as (
    select
        cpu_cost_weight,
        memory_cost_weight,
        estimate_lookback_days,
        include_data_transfer,
        platform_team,
        platform_cost_center,
        grace_days,
        deadline_days,
        factor_min,
        factor_max,
        unassigned_policy,
        bill_line_grain,
        repair_window_days,
        rerun_max_days_back,
        billing_retention_days,
        currency
    from {{ source('config', 'settings') }}
),

final as (
    select
        cast(cpu_cost_weight as double) as cpu_cost_weight,
        cast(memory_cost_weight as double) as memory_cost_weight,
        cast(estimate_lookback_days as integer) as estimate_lookback_days,
        cast(include_data_transfer as boolean) as include_data_transfer,
        cast(platform_team as {{ dbt.type_string() }}) as platform_team,
        cast(platform_cost_center as {{ dbt.type_string() }}) as platform_cost_center,
        cast(grace_days as integer) as grace_days,
        cast(deadline_days as integer) as deadline_days,
        cast(factor_min as double) as factor_min,
        cast(factor_max as double) as factor_max,
        cast(unassigned_policy as {{ dbt.type_string() }}) as unassigned_policy,
        cast(bill_line_grain as {{ dbt.type_string() }}) as bill_line_grain,
        cast(repair_window_days as integer) as repair_window_days,
        cast(rerun_max_days_back as integer) as rerun_max_days_back,
        cast(billing_retention_days as integer) as billing_retention_days,
        cast(currency as {{ dbt.type_string() }}) as currency
    from source
)

select * from final
