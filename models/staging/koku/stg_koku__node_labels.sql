-- One row per node and hour of the operator's node-label report, typed; the labels stay one
-- raw string (`label_kubernetes_io_arch:amd64|…`), parsed by int_node_labels_daily.

with

source as (
    select
        _cluster_id,
        interval_start,
        {{ source_column_or_null('koku', 'koku_node_labels', 'interval_end') }} as interval_end,
        node,
        node_labels,
        _source_file,
        _row_number,
        _source_day
    from {{ source('koku', 'koku_node_labels') }}
),

final as (
    select
        _cluster_id as cluster_id,
        {{ to_utc_timestamp('interval_start') }} as interval_start,
        {{ to_utc_timestamp('interval_end') }} as interval_end,
        cast({{ to_utc_timestamp('interval_start') }} as date) as usage_date,
        node,
        node_labels,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _source_day as source_day
    from source
)

select * from final
