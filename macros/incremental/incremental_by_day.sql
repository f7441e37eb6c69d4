{#- Config for a model that is rebuilt a day at a time: replace the days of this run.
    DuckDB deletes and inserts by day; Spark overwrites the day partitions. -#}
{% macro incremental_by_day(date_column) -%}
    {%- if target.type == 'spark' -%}
        {{ return({
            'materialized': 'incremental',
            'incremental_strategy': 'insert_overwrite',
            'partition_by': [date_column],
            'file_format': 'parquet',
        }) }}
    {%- else -%}
        {{ return({
            'materialized': 'incremental',
            'incremental_strategy': 'delete+insert',
            'unique_key': date_column,
        }) }}
    {%- endif -%}
{%- endmacro %}
