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
    where {{ day_range_filter('usage_date') }}
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

raw_labels as (
    select
        cluster_id,
        usage_date,
        namespace,
        {{ label_pair_key('label_pair') }} as raw_label_key,
        {{ label_pair_value('label_pair') }} as label_value
    from label_pairs
    where label_pair <> ''
),

label_keys as (
    {{ label_key_mapping('raw_labels', 'label_dns_prefixes', 'label_aliases') }}
),

labels_ranked as (
    select
        raw_labels.cluster_id,
        raw_labels.usage_date,
        raw_labels.namespace,
        label_keys.label_key,
        raw_labels.label_value,
        raw_labels.raw_label_key,
        row_number() over (
            partition by
                raw_labels.cluster_id,
                raw_labels.usage_date,
                raw_labels.namespace,
                label_keys.label_key
            order by
                label_keys.is_key_rewritten,
                raw_labels.raw_label_key,
                raw_labels.label_value
        ) as key_rank
    from raw_labels
    inner join label_keys
        on raw_labels.raw_label_key = label_keys.raw_label_key
    where label_keys.label_key <> ''
),

final as (
    select
        cluster_id,
        usage_date,
        namespace,
        label_key,
        label_value,
        raw_label_key,
        {{ is_generated_value('label_value') }} as is_generated_value
    from labels_ranked
    where key_rank = 1
)

select * from final
