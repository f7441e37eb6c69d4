-- One row per namespace name seen in any cluster: whether it is a platform namespace, by an
-- exact name or a prefix of the configured list (SPEC §5).
with

pod_namespaces as (
    select distinct namespace from {{ ref('stg_koku__pod_usage') }}
),

storage_namespaces as (
    select distinct namespace from {{ ref('stg_koku__storage_usage') }}
),

service_namespaces as (
    select distinct namespace from {{ ref('stg_cluster__lb_services') }}
),

platform_namespaces as (
    select
        namespace_pattern,
        match_type
    from {{ ref('stg_config__platform_namespaces') }}
),

namespaces as (
    select namespace from pod_namespaces
    union
    select namespace from storage_namespaces
    union
    select namespace from service_namespaces
),

final as (
    select
        namespaces.namespace,
        max(case when platform_namespaces.namespace_pattern is not null then 1 else 0 end) = 1
            as is_platform_namespace
    from namespaces
    left join platform_namespaces
        on
            (
                platform_namespaces.match_type = 'exact'
                and namespaces.namespace = platform_namespaces.namespace_pattern
            )
            or (
                platform_namespaces.match_type = 'prefix'
                and left(namespaces.namespace, length(platform_namespaces.namespace_pattern))
                = platform_namespaces.namespace_pattern
            )
    where namespaces.namespace is not null
    group by namespaces.namespace
)

select * from final
