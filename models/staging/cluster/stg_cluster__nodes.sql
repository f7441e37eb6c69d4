-- One row per cluster, node and provider ID of the supplementary nodes CSV, with the cloud,
-- instance key and scale set parsed from the provider ID (SPEC §3.1, §4). A node name can come
-- back on a new instance (AWS reuses IP-based names), so the provider ID is part of the key;
-- first and last seen span every file that listed the pair.

with

source as (
    select
        cluster_id,
        node,
        provider_id,
        {{ source_column_or_null('cluster', 'cluster_nodes', 'first_seen') }} as first_seen,
        {{ source_column_or_null('cluster', 'cluster_nodes', 'last_seen') }} as last_seen,
        _source_file,
        _row_number,
        _loaded_at
    from {{ source('cluster', 'cluster_nodes') }}
),

typed as (
    select
        trim(cluster_id) as cluster_id,
        trim(node) as node,
        trim(provider_id) as provider_id,
        {{ to_utc_timestamp("nullif(trim(first_seen), '')") }} as first_seen,
        {{ to_utc_timestamp("nullif(trim(last_seen), '')") }} as last_seen,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _loaded_at as loaded_at
    from source
    where nullif(trim(provider_id), '') is not null
),

-- The same node and provider ID listed by several files is one node: the latest file's row
-- is kept, with the earliest first_seen and latest last_seen any file gave.
listed as (
    select
        cluster_id,
        node,
        provider_id,
        min(first_seen) over (partition by cluster_id, node, provider_id) as first_seen,
        max(last_seen) over (partition by cluster_id, node, provider_id) as last_seen,
        source_file,
        source_row_number,
        row_number() over (
            partition by cluster_id, node, provider_id
            order by loaded_at desc, source_file desc, source_row_number desc
        ) as listing_rank
    from typed
),

final as (
    select
        cluster_id,
        node,
        provider_id,
        {{ cloud_provider_from_provider_id('provider_id') }} as cloud_provider,
        {{ instance_key_from_provider_id("provider_id") }} as instance_key,
        {{ scale_set_id_from_provider_id('provider_id') }} as scale_set_id,
        {{ scale_set_name_from_provider_id('provider_id') }} as scale_set_name,
        {{ azure_vm_index_from_provider_id('provider_id') }} as azure_vm_index,
        first_seen,
        last_seen,
        source_file,
        source_row_number
    from listed
    where listing_rank = 1
)

select * from final
