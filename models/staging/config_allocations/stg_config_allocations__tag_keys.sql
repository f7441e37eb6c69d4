-- One row per tag key an attribution rule reads: its role (resource_group, deployment,
-- session, project, user), the key as configured and the form keys are matched in.
with

source as (
    select
        tag_role,
        tag_key,
        tag_key_match,
        list_position
    from {{ source('config_allocations', 'cloud_charge_tag_keys') }}
),

final as (
    select
        cast(tag_role as {{ dbt.type_string() }}) as tag_role,
        cast(tag_key as {{ dbt.type_string() }}) as tag_key,
        cast(tag_key_match as {{ dbt.type_string() }}) as tag_key_match,
        cast(list_position as integer) as list_position
    from source
)

select * from final
