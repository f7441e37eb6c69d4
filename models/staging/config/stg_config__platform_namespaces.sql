-- One row per platform namespace name or prefix (SPEC §5): the configured list when
-- kubeledger.yml gives one, else the shipped default (seed platform_namespaces).
with

default_namespaces as (
    select
        namespace_pattern,
        match_type
    from {{ ref('platform_namespaces') }}
),

configured_namespaces as (
    select
        namespace_pattern,
        match_type
    from {{ source('config', 'platform_namespaces') }}
),

unioned as (
    select
        cast(namespace_pattern as {{ dbt.type_string() }}) as namespace_pattern,
        lower(cast(match_type as {{ dbt.type_string() }})) as match_type,
        'config' as pattern_source
    from configured_namespaces
    union all
    select
        cast(namespace_pattern as {{ dbt.type_string() }}) as namespace_pattern,
        lower(cast(match_type as {{ dbt.type_string() }})) as match_type,
        'default' as pattern_source
    from default_namespaces
    where not exists (select 1 from configured_namespaces)
),

final as (
    select
        namespace_pattern,
        match_type,
        pattern_source
    from unioned
)

select * from final
