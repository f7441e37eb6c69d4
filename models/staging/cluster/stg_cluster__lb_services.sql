-- One row per LoadBalancer Service of a cluster and cloud load-balancer ID it reports, from
-- the supplementary CSV (a Service can report several, e.g. one IP per zone). A pair listed by
-- several files keeps the row of the latest load.
with

source as (
    select
        cluster_id,
        namespace,
        service,
        load_balancer_id,
        _source_file,
        _row_number,
        _loaded_at
    from {{ source('cluster', 'cluster_lb_services') }}
),

typed as (
    select
        trim(cluster_id) as cluster_id,
        trim(namespace) as namespace,
        trim(service) as service,
        trim(load_balancer_id) as load_balancer_id,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _loaded_at as loaded_at
    from source
    where nullif(trim(load_balancer_id), '') is not null
),

ranked as (
    select
        *,
        row_number() over (
            partition by cluster_id, namespace, service, load_balancer_id
            order by loaded_at desc, source_file desc, source_row_number desc
        ) as listing_rank
    from typed
),

final as (
    select
        cluster_id,
        namespace,
        service,
        load_balancer_id,
        source_file,
        source_row_number
    from ranked
    where listing_rank = 1
)

select * from final
