-- One row per namespace and hour of the operator's namespace-label report, typed; the labels
-- stay one raw string, parsed by int_namespace_labels_daily.

with

source as (
    select
        _cluster_id,
        interval_start,
        {{ source_column_or_null('koku', 'koku_namespace_labels', 'interval_end') }}
            as interval_end,
        namespace,
        namespace_labels,
        _source_file,
        _row_number,
        _source_day
    from {{ source('koku', 'koku_namespace_labels') }}
),

final as (
    select
        _cluster_id as cluster_id,
        {{ to_utc_timestamp('interval_start') }} as interval_start,
        {{ to_utc_timestamp('interval_end') }} as interval_end,
        cast({{ to_utc_timestamp('interval_start') }} as date) as usage_date,
        namespace,
        namespace_labels,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _source_day as source_day
    from source
)

select * from final
