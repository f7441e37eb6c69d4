-- One row per DNS prefix dropped from label keys in their sanitized form (SPEC §6): the
-- shipped defaults (seed label_key_dns_prefixes: app.kubernetes.io, kubernetes.io, k8s.io) plus
-- the user's own (`labels.dns_prefixes`, e.g. example.com), with the `sanitized_prefix` the
-- operator's keys carry (`example_com_`).
with

default_prefixes as (
    select dns_prefix from {{ ref('label_key_dns_prefixes') }}
),

configured_prefixes as (
    select dns_prefix from {{ source('config', 'label_dns_prefixes') }}
),

unioned as (
    select
        cast(dns_prefix as {{ dbt.type_string() }}) as dns_prefix,
        'default' as prefix_source
    from default_prefixes
    union all
    select
        cast(dns_prefix as {{ dbt.type_string() }}) as dns_prefix,
        'config' as prefix_source
    from configured_prefixes
),

-- `Example.com/` and `example.com` are the same prefix
cleaned as (
    select
        case
            when substr(trim(dns_prefix), length(trim(dns_prefix))) = '/'
                then lower(substr(trim(dns_prefix), 1, length(trim(dns_prefix)) - 1))
            else lower(trim(dns_prefix))
        end as dns_prefix,
        prefix_source
    from unioned
    where nullif(trim(dns_prefix), '') is not null
),

ranked as (
    select
        dns_prefix,
        prefix_source,
        row_number() over (partition by dns_prefix order by prefix_source desc) as prefix_rank
    from cleaned
),

final as (
    select
        dns_prefix,
        replace(replace(replace(dns_prefix, '.', '_'), '-', '_'), '/', '_')
        || '_' as sanitized_prefix,
        prefix_source
    from ranked
    where prefix_rank = 1
)

select * from final
