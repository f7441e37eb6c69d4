-- One row per receiver of a `fixed` distribution rule (SPEC §7): its percent of the pool.
with

source as (
    select
        cluster_id,
        pool,
        team,
        cost_center,
        percent
    from {{ source('config', 'distribution_fixed_shares') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        lower(cast(pool as {{ dbt.type_string() }})) as pool,
        cast(team as {{ dbt.type_string() }}) as team,
        cast(cost_center as {{ dbt.type_string() }}) as cost_center,
        cast(percent as double) as percent  -- noqa: RF04
    from source
)

select * from final
