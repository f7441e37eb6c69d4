-- The one row of cloud-charge settings: the estimate window and the organization's default
-- billing username.
with

source as (
    select
        estimate_window_days,
        default_user_name
    from {{ source('config_allocations', 'cloud_charge_settings') }}
),

final as (
    select
        cast(estimate_window_days as integer) as estimate_window_days,
        cast(default_user_name as {{ dbt.type_string() }}) as default_user_name
    from source
)

select * from final
