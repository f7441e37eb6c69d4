-- One row per pod, GPU (or MIG instance) and hour of the operator's GPU report, typed.
-- `gpu_pod_uptime` is the seconds of the hour the pod held the GPU or slice. The MIG columns
-- and `gpu_max_slices` are optional (older operators omit them): null when absent or empty.

with

source as (
    select
        _cluster_id,
        interval_start,
        node,
        namespace,
        pod,
        gpu_uuid,
        gpu_model_name,
        gpu_vendor_name,
        gpu_memory_capacity_mib,
        gpu_pod_uptime,
        {{ source_column_or_null('koku', 'koku_gpu_usage', 'gpu_max_slices') }}
            as gpu_max_slices,
        {{ source_column_or_null('koku', 'koku_gpu_usage', 'mig_instance_id') }}
            as mig_instance_id,
        {{ source_column_or_null('koku', 'koku_gpu_usage', 'mig_profile') }} as mig_profile,
        {{ source_column_or_null('koku', 'koku_gpu_usage', 'mig_strategy') }} as mig_strategy,
        _source_file,
        _row_number,
        _source_day
    from {{ source('koku', 'koku_gpu_usage') }}
),

final as (
    select
        _cluster_id as cluster_id,
        {{ to_utc_timestamp('interval_start') }} as interval_start,
        cast({{ to_utc_timestamp('interval_start') }} as date) as usage_date,
        node,
        namespace,
        pod,
        trim(gpu_uuid) as gpu_uuid,
        nullif(trim(gpu_model_name), '') as gpu_model_name,
        nullif(trim(gpu_vendor_name), '') as gpu_vendor_name,
        cast(nullif(trim(gpu_memory_capacity_mib), '') as double) as gpu_memory_capacity_mib,
        cast(nullif(trim(gpu_pod_uptime), '') as double) as gpu_pod_uptime_seconds,
        cast(cast(nullif(trim(gpu_max_slices), '') as double) as integer) as gpu_max_slices,
        nullif(trim(mig_instance_id), '') as mig_instance_id,
        nullif(trim(mig_profile), '') as mig_profile,
        nullif(trim(mig_strategy), '') as mig_strategy,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _source_day as source_day
    from source
)

select * from final
