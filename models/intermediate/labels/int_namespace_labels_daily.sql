-- One row per cluster, day, namespace and normalized label key: the namespace's labels of its
-- last reported hour that day, keys normalized and collisions resolved as for pods (SPEC §6).
{{ config(**incremental_by_day('usage_date')) }}

with

namespace_label_hours as (
    select
        cluster_id,
        usage_date,
        interval_start,
        namespace,
        source_file,
        source_row_number,
        namespace_labels
    from {{ ref('stg_koku__namespace_labels') }}
    where {{ day_range_filter('usage_date', source_day='source_day') }}
),

label_dns_prefixes as (
    select sanitized_prefix from {{ ref('stg_config__label_dns_prefixes') }}
),

label_aliases as (
    select
        alias_key,
        canonical_key
    from {{ ref('stg_config__label_aliases') }}
),

namespace_hours_ranked as (
    select
        cluster_id,
        usage_date,
        namespace,
        namespace_labels,
        row_number() over (
            partition by cluster_id, usage_date, namespace
            order by interval_start desc, source_file desc, source_row_number desc
        ) as hour_rank
    from namespace_label_hours
),

label_pairs as (
    select
        cluster_id,
        usage_date,
        namespace,
        {{ split_label_pairs('namespace_labels') }} as label_pair
    from namespace_hours_ranked
    where hour_rank = 1
),

{{ normalized_label_ctes(['cluster_id', 'usage_date', 'namespace']) }}

select * from final
