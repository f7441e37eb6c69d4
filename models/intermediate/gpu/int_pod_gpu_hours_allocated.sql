{{ config(**incremental_by_day('usage_date')) }}

-- One row per pod and hour it held a GPU or MIG slice on a GPU node: its GPU-seconds and its
-- share of the node-hour's GPU part (SPEC §5). Each GPU of the node carries GPU part / GPUs.
-- A row's GPU-seconds = `gpu_pod_uptime` × the fraction of the GPU it holds (a MIG slice its
-- profile's compute slices / the GPU's slices, a whole or time-shared GPU 1); its claim on the
-- GPU = GPU-seconds / (3600 × f_h). When the claims on one GPU-hour sum past 1 (time-sliced
-- sharing: several pods held the whole GPU that hour) each is scaled by 1 / Σ claims, so pods
-- share the GPU by uptime and never get more than it costs. GPU time no pod held is idle,
-- like CPU and memory no pod claimed (int_node_hours_allocated).
with

gpu_rows as (
    select
        cluster_id,
        usage_date,
        interval_start,
        node,
        namespace,
        pod,
        gpu_uuid,
        gpu_pod_uptime_seconds,
        {{ mig_slice_fraction('mig_profile', 'gpu_max_slices', 'gpu_model_name') }}
            as gpu_fraction
    from {{ ref('stg_koku__gpu_usage') }}
    where {{ day_range_filter('usage_date', source_day='source_day') }}
),

node_hours as (
    select
        cluster_id,
        node,
        interval_start,
        gpu_count,
        gpu_capacity_seconds,
        gpu_cost
    from {{ ref('int_node_hours_priced') }}
    where gpu_count > 0 and {{ day_range_filter('usage_date') }}
),

claims as (
    select
        gpu_rows.cluster_id,
        gpu_rows.usage_date,
        gpu_rows.interval_start,
        gpu_rows.node,
        gpu_rows.namespace,
        gpu_rows.pod,
        gpu_rows.gpu_uuid,
        coalesce(gpu_rows.gpu_pod_uptime_seconds, 0) * gpu_rows.gpu_fraction as gpu_seconds,
        coalesce(gpu_rows.gpu_pod_uptime_seconds, 0) * gpu_rows.gpu_fraction
        / nullif(node_hours.gpu_capacity_seconds / node_hours.gpu_count, 0) as gpu_claim,
        node_hours.gpu_cost / node_hours.gpu_count as gpu_unit_cost
    from gpu_rows
    inner join node_hours
        on
            gpu_rows.cluster_id = node_hours.cluster_id
            and gpu_rows.node = node_hours.node
            and gpu_rows.interval_start = node_hours.interval_start
),

scaled as (
    select
        *,
        {{ exact_sum('gpu_claim', over='partition by cluster_id, node, interval_start, gpu_uuid') }}
            as gpu_claims_total
    from claims
),

factors as (
    select
        *,
        case when gpu_claims_total > 1 then 1 / gpu_claims_total else 1 end as gpu_scale
    from scaled
),

final as (
    select
        cluster_id,
        usage_date,
        interval_start,
        node,
        namespace,
        pod,
        {{ exact_sum('gpu_seconds') }} as gpu_seconds,
        {{ exact_sum('coalesce(gpu_claim * gpu_scale, 0)') }} as gpu_claim_scaled,
        {{ exact_sum('coalesce(gpu_unit_cost * gpu_claim * gpu_scale, 0)') }} as gpu_cost,
        max(case when gpu_claims_total > 1 then 1 else 0 end) = 1 as is_gpu_overcommitted
    from factors
    group by cluster_id, usage_date, interval_start, node, namespace, pod
)

select * from final
