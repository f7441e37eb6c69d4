-- One row per owned object of a cluster (a pod, ReplicaSet or Job) and its controlling owner,
-- from the supplementary owners CSV. An object listed by several files keeps the row of the
-- latest load.
with

source as (
    select
        cluster_id,
        namespace,
        kind,
        name,
        owner_kind,
        owner_name,
        _source_file,
        _row_number,
        _loaded_at
    from {{ source('cluster', 'cluster_owners') }}
),

typed as (
    select
        trim(cluster_id) as cluster_id,
        trim(namespace) as namespace,
        trim(kind) as kind,
        trim(name) as name,  -- noqa: RF04
        nullif(trim(owner_kind), '') as owner_kind,
        nullif(trim(owner_name), '') as owner_name,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _loaded_at as loaded_at
    from source
),

ranked as (
    select
        *,
        row_number() over (
            partition by cluster_id, namespace, kind, name
            order by loaded_at desc, source_file desc, source_row_number desc
        ) as listing_rank
    from typed
),

final as (
    select
        cluster_id,
        namespace,
        kind,
        name,
        owner_kind,
        owner_name,
        source_file,
        source_row_number
    from ranked
    where listing_rank = 1
)

select * from final
