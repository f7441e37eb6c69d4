-- One row per cloud account (billing account, sub-account, project or subscription ID) with
-- a default allocation, from its start date on, and/or a default billing username.
with

source as (
    select
        account_id,
        default_allocation_name,
        default_allocation_start_date,
        default_user_name
    from {{ source('config_allocations', 'cloud_charge_accounts') }}
),

final as (
    select
        cast(account_id as {{ dbt.type_string() }}) as account_id,
        cast(default_allocation_name as {{ dbt.type_string() }}) as default_allocation_name,
        cast(default_allocation_start_date as date) as default_allocation_start_date,
        cast(default_user_name as {{ dbt.type_string() }}) as default_user_name
    from source
)

select * from final
