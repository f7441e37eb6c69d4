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

-- The labels of each pod-day's last hour: the row of the latest hour, then (a pod on two
-- nodes in that hour, or reported twice) the last node, file and row, all descending. One
-- grouped max_by, so the month's pod-hours are never sorted or held whole: a window over them
-- spilled 20 GB at 10,000 nodes. A row with no node ranks below every row with one (as the
-- nulls-last order did); rows with no hour cannot be a day's last hour.
pod_last_hours as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        max_by(
            pod_labels,
            {{ ordered_struct([
                ('interval_start', 'interval_start'),
                ('has_node', 'node is not null'),
                ('node', 'node'),
                ('source_file', 'source_file'),
                ('source_row_number', 'source_row_number'),
            ]) }}
        ) as pod_labels
    from pod_usage
    where interval_start is not null
    group by cluster_id, usage_date, namespace, pod
),

label_pairs as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        {{ split_label_pairs('pod_labels') }} as label_pair
    from pod_last_hours
),

{{ normalized_label_ctes(['cluster_id', 'usage_date', 'namespace', 'pod']) }}

select * from final
