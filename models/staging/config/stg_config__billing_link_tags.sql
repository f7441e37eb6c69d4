-- One row per tag that selects a cluster's billing lines; a null value selects any value.
with

source as (
    select
        cluster_id,
        tag_key,
        tag_key_normalized,
        tag_value
    from {{ source('config', 'billing_link_tags') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(tag_key as {{ dbt.type_string() }}) as tag_key,
        cast(tag_key_normalized as {{ dbt.type_string() }}) as tag_key_normalized,
        cast(tag_value as {{ dbt.type_string() }}) as tag_value
    from source
)

select * from final
