-- One row per namespace mapping (SPEC §6 rule 3); a null cluster applies to every cluster.
with

source as (
    select
        cluster_id,
        namespace,
        team,
        cost_center,
        application,
        effective_from
    from {{ source('config', 'namespace_mappings') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(namespace as {{ dbt.type_string() }}) as namespace,
        cast(team as {{ dbt.type_string() }}) as team,
        cast(cost_center as {{ dbt.type_string() }}) as cost_center,
        cast(application as {{ dbt.type_string() }}) as application,
        cast(effective_from as date) as effective_from
    from source
)

select * from final
