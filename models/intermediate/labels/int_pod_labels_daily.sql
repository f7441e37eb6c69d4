-- One row per cluster, day, pod and normalized label key: the pod's labels of its last hour
-- that day (SPEC §6), keys normalized (`label_app_kubernetes_io_name` → `app`). When two raw
-- keys normalize to the same key, the one that needed no rewriting wins, then the
-- alphabetically first raw key. The last hour is picked before the labels are split, so the
-- work grows with pod-days, not pod-hours.
{{ config(**incremental_by_day('usage_date')) }}

with

pod_usage as (
    select
        cluster_id,
        usage_date,
        interval_start,
        namespace,
        pod,
        node,
        source_file,
        source_row_number,
        pod_labels
    from {{ ref('stg_koku__pod_usage') }}
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

-- The last hour is found with a grouped max first, so the ranking window below sorts only
-- the rows of each pod's last hour (usually one), not every pod-hour of the day.
pod_last_hours as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        max(interval_start) as interval_start
    from pod_usage
    group by cluster_id, usage_date, namespace, pod
),

pod_hours_ranked as (
    select
        pod_usage.cluster_id,
        pod_usage.usage_date,
        pod_usage.namespace,
        pod_usage.pod,
        pod_usage.pod_labels,
        row_number() over (
            partition by
                pod_usage.cluster_id, pod_usage.usage_date, pod_usage.namespace, pod_usage.pod
            order by
                pod_usage.node desc,
                pod_usage.source_file desc,
                pod_usage.source_row_number desc
        ) as hour_rank
    from pod_usage
    inner join pod_last_hours
        on
            pod_usage.cluster_id = pod_last_hours.cluster_id
            and pod_usage.usage_date = pod_last_hours.usage_date
            and pod_usage.namespace = pod_last_hours.namespace
            and pod_usage.pod = pod_last_hours.pod
            and pod_usage.interval_start = pod_last_hours.interval_start
),

label_pairs as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        {{ split_label_pairs('pod_labels') }} as label_pair
    from pod_hours_ranked
    where hour_rank = 1
),

{{ normalized_label_ctes(['cluster_id', 'usage_date', 'namespace', 'pod']) }}

select * from final
