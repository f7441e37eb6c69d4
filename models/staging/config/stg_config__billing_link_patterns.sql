-- One row per case-insensitive regular expression on a billing line's resource ID that
-- selects a cluster's lines.
with

source as (
    select
        cluster_id,
        pattern
    from {{ source('config', 'billing_link_patterns') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(pattern as {{ dbt.type_string() }}) as pattern
    from source
)

select * from final
