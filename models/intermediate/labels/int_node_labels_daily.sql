-- One row per cluster, day, node and normalized label key: the node's labels of its last
-- reported hour that day, keys normalized and collisions resolved as for pods (SPEC §6).
-- `raw_label_key` keeps the key as written, for rules that need it (node role, rate-card
-- selectors).
{{ config(**incremental_by_day('usage_date')) }}

with

node_label_hours as (
    select
        cluster_id,
        usage_date,
        interval_start,
        node,
        source_file,
        source_row_number,
        node_labels
    from {{ ref('stg_koku__node_labels') }}
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

node_hours_ranked as (
    select
        cluster_id,
        usage_date,
        node,
        node_labels,
        row_number() over (
            partition by cluster_id, usage_date, node
            order by interval_start desc, source_file desc, source_row_number desc
        ) as hour_rank
    from node_label_hours
),

label_pairs as (
    select
        cluster_id,
        usage_date,
        node,
        {{ split_label_pairs('node_labels') }} as label_pair
    from node_hours_ranked
    where hour_rank = 1
),

{{ normalized_label_ctes(['cluster_id', 'usage_date', 'node']) }}

select * from final
