{{ config(**incremental_by_day('usage_date')) }}

-- One row per pod and hour it ran on a node: its share of the node-hour's cost (SPEC §5).
-- Node-hour cost = node-day cost × f_h / Σ f over the day, split into CPU and memory parts by
-- the configured weights. A pod's claim on a resource = max(request, usage) / capacity; when
-- the claims on a node-hour sum past 1 each is scaled by s = 1 / Σ claims, so a node-hour never
-- hands out more than its cost. Used cost = part cost × min(usage / capacity, claim × s); the
-- rest of the pod's cost is its workload idle. Platform is decided per pod-hour: the hour of a
-- pod in a platform namespace, or on a control-plane / master / infra node, is platform.
-- On a GPU node a pod-hour also carries its share of the GPU part (int_pod_gpu_hours_allocated);
-- the GPU report has no utilization, so a pod's GPU cost is all used (GPU time held is GPU
-- time used) and GPU time nobody held is idle.
with

pod_usage as {{ materialized_in_day_runs() }} (
    select
        cluster_id,
        usage_date,
        interval_start,
        node,
        namespace,
        pod,
        cpu_usage_core_seconds,
        cpu_request_core_seconds,
        memory_usage_byte_seconds,
        memory_request_byte_seconds,
        node_capacity_cpu_core_seconds,
        node_capacity_memory_byte_seconds
    from {{ ref('stg_koku__pod_usage') }}
    where {{ day_range_filter('usage_date', source_day='source_day') }}
),

node_hours as (
    select
        cluster_id,
        node,
        interval_start,
        node_hour_cost,
        cpu_cost,
        memory_cost,
        is_platform_node
    from {{ ref('int_node_hours_priced') }}
    where {{ day_range_filter('usage_date') }}
),

pod_gpu_hours as (
    select
        cluster_id,
        node,
        interval_start,
        namespace,
        pod,
        gpu_seconds,
        gpu_cost,
        is_gpu_overcommitted
    from {{ ref('int_pod_gpu_hours_allocated') }}
    where {{ day_range_filter('usage_date') }}
),

namespace_classes as (
    select
        namespace,
        is_platform_namespace
    from {{ ref('int_namespaces_classified') }}
),

claims as (
    select
        pod_usage.*,
        greatest(pod_usage.cpu_request_core_seconds, pod_usage.cpu_usage_core_seconds)
        / nullif(pod_usage.node_capacity_cpu_core_seconds, 0) as cpu_claim,
        greatest(pod_usage.memory_request_byte_seconds, pod_usage.memory_usage_byte_seconds)
        / nullif(pod_usage.node_capacity_memory_byte_seconds, 0) as memory_claim,
        pod_usage.cpu_usage_core_seconds
        / nullif(pod_usage.node_capacity_cpu_core_seconds, 0) as cpu_usage_share,
        pod_usage.memory_usage_byte_seconds
        / nullif(pod_usage.node_capacity_memory_byte_seconds, 0) as memory_usage_share
    from pod_usage
),

scaled as (
    select
        *,
        {{ exact_sum('cpu_claim', over='partition by cluster_id, node, interval_start') }}
            as cpu_claims_total,
        {{ exact_sum('memory_claim', over='partition by cluster_id, node, interval_start') }}
            as memory_claims_total
    from claims
),

factors as (
    select
        *,
        case when cpu_claims_total > 1 then 1 / cpu_claims_total else 1 end as cpu_scale,
        case when memory_claims_total > 1 then 1 / memory_claims_total else 1 end
            as memory_scale
    from scaled
),

final as (
    select
        factors.cluster_id,
        factors.usage_date,
        factors.interval_start,
        factors.node,
        factors.namespace,
        factors.pod,
        factors.cpu_usage_core_seconds,
        factors.cpu_request_core_seconds,
        factors.memory_usage_byte_seconds,
        factors.memory_request_byte_seconds,
        coalesce(factors.cpu_claim * factors.cpu_scale, 0) as cpu_claim_scaled,
        coalesce(factors.memory_claim * factors.memory_scale, 0) as memory_claim_scaled,
        coalesce(node_hours.cpu_cost * factors.cpu_claim * factors.cpu_scale, 0) as cpu_cost,
        coalesce(
            node_hours.cpu_cost
            * least(factors.cpu_usage_share, factors.cpu_claim * factors.cpu_scale),
            0
        ) as cpu_used_cost,
        coalesce(
            node_hours.memory_cost * factors.memory_claim * factors.memory_scale, 0
        ) as memory_cost,
        coalesce(
            node_hours.memory_cost
            * least(factors.memory_usage_share, factors.memory_claim * factors.memory_scale),
            0
        ) as memory_used_cost,
        coalesce(pod_gpu_hours.gpu_seconds, 0) as gpu_seconds,
        coalesce(pod_gpu_hours.gpu_cost, 0) as gpu_cost,
        coalesce(pod_gpu_hours.gpu_cost, 0) as gpu_used_cost,
        coalesce(pod_gpu_hours.is_gpu_overcommitted, false) as is_gpu_overcommitted,
        factors.cpu_claims_total > 1 as is_cpu_overcommitted,
        factors.memory_claims_total > 1 as is_memory_overcommitted,
        coalesce(node_hours.is_platform_node, false) as is_on_platform_node,
        coalesce(namespace_classes.is_platform_namespace, false) as is_platform_namespace,
        coalesce(node_hours.is_platform_node, false)
        or coalesce(namespace_classes.is_platform_namespace, false) as is_platform
    from factors
    left join node_hours
        on
            factors.cluster_id = node_hours.cluster_id
            and factors.node = node_hours.node
            and factors.interval_start = node_hours.interval_start
    left join pod_gpu_hours
        on
            factors.cluster_id = pod_gpu_hours.cluster_id
            and factors.node = pod_gpu_hours.node
            and factors.interval_start = pod_gpu_hours.interval_start
            and factors.namespace = pod_gpu_hours.namespace
            and factors.pod = pod_gpu_hours.pod
    left join namespace_classes on factors.namespace = namespace_classes.namespace
)

select * from final
