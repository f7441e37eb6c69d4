{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, day and rollup (workload, namespace, team, cluster): CPU, memory and
-- total efficiency (SPEC §12). A pod's efficiency on a resource = usage / request (1.0 with
-- usage and no request; 0 with neither); every rollup is weighted by cost:
-- Σ(efficiency × cost) / Σ cost. Waste is the cost of requested capacity not used. GPU: the
-- operator's GPU report gives the time a pod held a GPU (its request) and no utilization, so
-- held time counts as used: a pod's GPU efficiency is 1.0 when it held a GPU, and GPU time no
-- pod held is infrastructure idle, not waste. Every row is one day's pod costs rolled up, so a
-- day's run rebuilds that day only.
with

pods as (
    select
        cluster_id,
        usage_date,
        namespace,
        workload_kind,
        workload_name,
        team,
        cpu_usage_core_hours,
        cpu_request_core_hours,
        memory_usage_gib_hours,
        memory_request_gib_hours,
        cpu_cost,
        memory_cost,
        coalesce(gpu_hours, 0) as gpu_hours,
        coalesce(gpu_cost, 0) as gpu_cost,
        workload_idle_cost
    from {{ ref('fct_pod_costs_daily') }}
    where {{ day_range_filter('usage_date') }}
),

pod_efficiency as (
    select
        *,
        case
            when cpu_request_core_hours > 0 then cpu_usage_core_hours / cpu_request_core_hours
            when cpu_usage_core_hours > 0 then 1.0
            else 0.0
        end as cpu_efficiency,
        case
            when memory_request_gib_hours > 0
                then memory_usage_gib_hours / memory_request_gib_hours
            when memory_usage_gib_hours > 0 then 1.0
            else 0.0
        end as memory_efficiency,
        case when gpu_hours > 0 then 1.0 else 0.0 end as gpu_efficiency
    from pods
),

rollups as (
    {% for level, key in [
        ('workload', "namespace || '/' || coalesce(workload_kind, '') || '/' || coalesce(workload_name, '')"),
        ('namespace', 'namespace'),
        ('team', 'team'),
        ('cluster', 'cluster_id'),
    ] %}
        select
            cluster_id,
            usage_date,
            '{{ level }}' as rollup_level,
            {{ key }} as rollup_key,
            sum(cpu_cost) as cpu_cost,
            sum(memory_cost) as memory_cost,
            sum(cpu_efficiency * cpu_cost) as weighted_cpu_efficiency,
            sum(memory_efficiency * memory_cost) as weighted_memory_efficiency,
            sum(gpu_cost) as gpu_cost,
            sum(gpu_efficiency * gpu_cost) as weighted_gpu_efficiency,
            sum(workload_idle_cost) as waste_cost
        from pod_efficiency
        group by cluster_id, usage_date, {{ key }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

final as (
    select
        cluster_id,
        usage_date,
        rollup_level,
        rollup_key,
        {{ safe_divide('weighted_cpu_efficiency', 'cpu_cost') }} as cpu_efficiency,
        {{ safe_divide('weighted_memory_efficiency', 'memory_cost') }} as memory_efficiency,
        {{ safe_divide('weighted_gpu_efficiency', 'gpu_cost') }} as gpu_efficiency,
        {{ safe_divide('weighted_cpu_efficiency + weighted_memory_efficiency'
                       ' + weighted_gpu_efficiency',
                       'cpu_cost + memory_cost + gpu_cost') }} as total_efficiency,
        cpu_cost,
        memory_cost,
        gpu_cost,
        cpu_cost + memory_cost + gpu_cost as compute_cost,
        waste_cost
    from rollups
)

select * from final
