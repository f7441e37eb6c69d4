-- One row per requirement of a label selector mapping (SPEC §6 rule 1), mappings in the order
-- listed: `app.kubernetes.io/name in (cart), tier != batch` is two requirements of one
-- mapping, both of which must hold. `selector_key` is the key as written; it is normalized
-- (aliases and DNS prefixes included) by the same rule as pod label keys, in
-- int_selector_requirements_normalized. `label_values` is pipe-joined (`cart|checkout`).
with

source as (
    select
        list_position,
        requirement_position,
        cluster_id,
        selector_key,
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
        cast(requirement_position as integer) as requirement_position,
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(selector_key as {{ dbt.type_string() }}) as selector_key,
        lower(cast(operator as {{ dbt.type_string() }})) as operator,  -- noqa: RF04
        cast(label_values as {{ dbt.type_string() }}) as label_values,
        cast(team as {{ dbt.type_string() }}) as team,
        cast(cost_center as {{ dbt.type_string() }}) as cost_center,
        cast(application as {{ dbt.type_string() }}) as application,
        cast(effective_from as date) as effective_from
    from source
)

select * from final
