-- One row per change in a resource group's allocation history: from `effective_at` (UTC) on,
-- the group's charges go to `allocation_name`, until the group's next change.
with

source as (
    select
        resource_group_id,
        allocation_name,
        effective_at,
        list_position
    from {{ source('config_allocations', 'cloud_charge_resource_groups') }}
),

final as (
    select
        cast(resource_group_id as {{ dbt.type_string() }}) as resource_group_id,
        cast(allocation_name as {{ dbt.type_string() }}) as allocation_name,
        cast(effective_at as {{ dbt.type_timestamp() }}) as effective_at,
        cast(list_position as integer) as list_position
    from source
)

select * from final
