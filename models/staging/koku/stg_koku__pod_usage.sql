-- One row per pod, node and hour of the operator's pod report, typed. Optional columns
-- (`node_role`, limits) are null when the loaded files did not have them.

with

source as (
    select
        _cluster_id,
        interval_start,
        interval_end,
        node,
        namespace,
        pod,
        pod_usage_cpu_core_seconds,
        pod_request_cpu_core_seconds,
        {{ source_column_or_null('koku', 'koku_pod_usage', 'pod_limit_cpu_core_seconds') }}
            as pod_limit_cpu_core_seconds,
        pod_usage_memory_byte_seconds,
        pod_request_memory_byte_seconds,
        {{ source_column_or_null('koku', 'koku_pod_usage', 'pod_limit_memory_byte_seconds') }}
            as pod_limit_memory_byte_seconds,
        node_capacity_cpu_cores,
        node_capacity_cpu_core_seconds,
        node_capacity_memory_bytes,
        node_capacity_memory_byte_seconds,
        {{ source_column_or_null('koku', 'koku_pod_usage', 'node_role') }} as node_role,
        resource_id,
        pod_labels,
        _source_file,
        _row_number,
        _source_day
    from {{ source('koku', 'koku_pod_usage') }}
),

typed as (
    select
        _cluster_id as cluster_id,
        {{ to_utc_timestamp('interval_start') }} as interval_start,
        {{ to_utc_timestamp('interval_end') }} as interval_end,
        node,
        namespace,
        pod,
        cast(nullif(trim(pod_usage_cpu_core_seconds), '') as double) as cpu_usage_core_seconds,
        cast(nullif(trim(pod_request_cpu_core_seconds), '') as double)
            as cpu_request_core_seconds,
        cast(nullif(trim(pod_limit_cpu_core_seconds), '') as double) as cpu_limit_core_seconds,
        cast(nullif(trim(pod_usage_memory_byte_seconds), '') as double)
            as memory_usage_byte_seconds,
        cast(nullif(trim(pod_request_memory_byte_seconds), '') as double)
            as memory_request_byte_seconds,
        cast(nullif(trim(pod_limit_memory_byte_seconds), '') as double)
            as memory_limit_byte_seconds,
        cast(nullif(trim(node_capacity_cpu_cores), '') as double) as node_capacity_cpu_cores,
        cast(nullif(trim(node_capacity_cpu_core_seconds), '') as double)
            as node_capacity_cpu_core_seconds,
        cast(nullif(trim(node_capacity_memory_bytes), '') as double)
            as node_capacity_memory_bytes,
        cast(nullif(trim(node_capacity_memory_byte_seconds), '') as double)
            as node_capacity_memory_byte_seconds,
        nullif(trim(node_role), '') as node_role,
        nullif(trim(resource_id), '') as resource_id,
        pod_labels,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _source_day as source_day
    from source
),

final as (
    select
        cluster_id,
        interval_start,
        interval_end,
        cast(interval_start as date) as usage_date,
        node,
        namespace,
        pod,
        cpu_usage_core_seconds,
        cpu_request_core_seconds,
        cpu_limit_core_seconds,
        memory_usage_byte_seconds,
        memory_request_byte_seconds,
        memory_limit_byte_seconds,
        node_capacity_cpu_cores,
        node_capacity_cpu_core_seconds,
        node_capacity_memory_bytes,
        node_capacity_memory_byte_seconds,
        node_role,
        resource_id,
        pod_labels,
        source_file,
        source_row_number,
        source_day
    from typed
)

select * from final
