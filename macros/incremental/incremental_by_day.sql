{#- Config for a model that is rebuilt a day at a time and filters its input with
    day_range_filter(date_column): replace the days of this run. DuckDB deletes and inserts by
    day; Spark overwrites the day partitions. On DuckDB a pre-hook records which days the run
    rebuilds (record_rebuilt_days), so that its data tests check those days only. -#}
{% macro incremental_by_day(date_column) -%}
    {%- set config = incremental_by_period(date_column) -%}
    {%- if target.type == 'duckdb' -%}
        {%- do config.update({'pre_hook': ["{{ record_rebuilt_days('" ~ date_column ~ "') }}"]}) -%}
    {%- endif -%}
    {{ return(config) }}
{%- endmacro %}

{#- Config for a model rebuilt a period at a time by its own filter (a month: the close
    models' close_month_filter): replace the periods of this run, with no record of rebuilt
    days, so its data tests always check the whole table. -#}
{% macro incremental_by_period(period_column) -%}
    {%- if target.type == 'spark' -%}
        {{ return({
            'materialized': 'incremental',
            'incremental_strategy': 'insert_overwrite',
            'partition_by': [period_column],
            'file_format': 'parquet',
        }) }}
    {%- else -%}
        {{ return({
            'materialized': 'incremental',
            'incremental_strategy': 'delete+insert',
            'unique_key': period_column,
        }) }}
    {%- endif -%}
{%- endmacro %}
