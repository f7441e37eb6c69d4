-- One row per deployment: the resource group recorded for it and the user who created it.
with

source as (
    select
        deployment_id,
        resource_group_id,
        user_name
    from {{ source('config_allocations', 'cloud_charge_deployments') }}
),

final as (
    select
        cast(deployment_id as {{ dbt.type_string() }}) as deployment_id,
        cast(resource_group_id as {{ dbt.type_string() }}) as resource_group_id,
        cast(user_name as {{ dbt.type_string() }}) as user_name
    from source
)

select * from final
