-- One row per cluster (`*`: every cluster) and cost pool with its distribution rule (SPEC §7);
-- a cluster's own row overrides `*`.
with

source as (
    select
        cluster_id,
        pool,
        rule,
        basis,
        hybrid_share,
        scope,
        include_unowned,
        include_platform
    from {{ source('config', 'distribution_rules') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        lower(cast(pool as {{ dbt.type_string() }})) as pool,
        lower(cast(rule as {{ dbt.type_string() }})) as rule,  -- noqa: RF04
        lower(cast(basis as {{ dbt.type_string() }})) as basis,
        cast(hybrid_share as double) as hybrid_share,
        lower(cast(scope as {{ dbt.type_string() }})) as scope,
        cast(include_unowned as boolean) as include_unowned,
        cast(include_platform as boolean) as include_platform
    from source
)

select * from final
