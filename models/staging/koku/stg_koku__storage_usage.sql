-- One row per PersistentVolumeClaim, mounting pod (null when none) and hour of the operator's
-- storage report, typed. Optional columns (node, CSI driver and handle, labels) are null when
-- the loaded files did not have them.

with

source as (
    select
        _cluster_id,
        interval_start,
        interval_end,
        namespace,
        pod,
        {{ source_column_or_null('koku', 'koku_storage_usage', 'node') }} as node,
        persistentvolumeclaim,
        persistentvolume,
        storageclass,
        {{ source_column_or_null('koku', 'koku_storage_usage', 'csi_driver') }} as csi_driver,
        {{ source_column_or_null('koku', 'koku_storage_usage', 'csi_volume_handle') }}
            as csi_volume_handle,
        persistentvolumeclaim_capacity_bytes,
        persistentvolumeclaim_capacity_byte_seconds,
        volume_request_storage_byte_seconds,
        persistentvolumeclaim_usage_byte_seconds,
        {{ source_column_or_null('koku', 'koku_storage_usage', 'persistentvolume_labels') }}
            as persistentvolume_labels,
        {{ source_column_or_null('koku', 'koku_storage_usage', 'persistentvolumeclaim_labels') }}
            as persistentvolumeclaim_labels,
        _source_file,
        _row_number,
        _source_day
    from {{ source('koku', 'koku_storage_usage') }}
),

final as (
    select
        _cluster_id as cluster_id,
        {{ to_utc_timestamp('interval_start') }} as interval_start,
        {{ to_utc_timestamp('interval_end') }} as interval_end,
        cast({{ to_utc_timestamp('interval_start') }} as date) as usage_date,
        namespace,
        nullif(trim(pod), '') as pod,
        nullif(trim(node), '') as node,
        nullif(trim(persistentvolumeclaim), '') as pvc_name,
        nullif(trim(persistentvolume), '') as pv_name,
        nullif(trim(storageclass), '') as storageclass,
        nullif(trim(csi_driver), '') as csi_driver,
        nullif(trim(csi_volume_handle), '') as csi_volume_handle,
        cast(nullif(trim(persistentvolumeclaim_capacity_bytes), '') as double) as capacity_bytes,
        cast(nullif(trim(persistentvolumeclaim_capacity_byte_seconds), '') as double)
            as capacity_byte_seconds,
        cast(nullif(trim(volume_request_storage_byte_seconds), '') as double)
            as request_byte_seconds,
        cast(nullif(trim(persistentvolumeclaim_usage_byte_seconds), '') as double)
            as usage_byte_seconds,
        persistentvolume_labels as pv_labels,
        persistentvolumeclaim_labels as pvc_labels,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _source_day as source_day
    from source
)

select * from final
