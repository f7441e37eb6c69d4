-- One row per label selector mapping (SPEC §6 rule 1), in the order listed; `label_values`
-- is pipe-joined (`cart|checkout`).
with

source as (
    select
        list_position,
        cluster_id,
        label_key,
        operator,
        label_values,
        team,
        cost_center,
        application,
        effective_from
    from {{ source('config', 'selector_mappings') }}
),

final as (
    select
        cast(list_position as integer) as list_position,
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(label_key as {{ dbt.type_string() }}) as label_key,
        lower(cast(operator as {{ dbt.type_string() }})) as operator,  -- noqa: RF04
        cast(label_values as {{ dbt.type_string() }}) as label_values,
        cast(team as {{ dbt.type_string() }}) as team,
        cast(cost_center as {{ dbt.type_string() }}) as cost_center,
        cast(application as {{ dbt.type_string() }}) as application,
        cast(effective_from as date) as effective_from
    from source
)

select * from final
