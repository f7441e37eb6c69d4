{#- Registers Parquet folders as tables: `dbt run-operation register_parquet_tables --args
    '{tables: [{schema: raw, name: koku_pod_usage, location: /…/raw/koku_pod_usage}]}'`.
    The Spark loader (orchestration/kubeledger/spark) calls it after exporting the raw and
    config tables, so the tables live in the metastore of the profile's Spark session. -#}
{% macro register_parquet_tables(tables) -%}
    {%- set schemas = tables | map(attribute='schema') | unique | list -%}
    {%- for schema in schemas -%}
        {%- do run_query('create schema if not exists ' ~ adapter.quote(schema)) -%}
    {%- endfor -%}
    {%- for table in tables -%}
        {%- set name = adapter.quote(table.schema) ~ '.' ~ adapter.quote(table.name) -%}
        {%- do run_query('drop table if exists ' ~ name) -%}
        {%- do run_query(
            'create table ' ~ name ~ " using parquet location '" ~ table.location ~ "'"
        ) -%}
    {%- endfor -%}
    {{ log('registered ' ~ (tables | length) ~ ' Parquet tables', info=true) }}
{%- endmacro %}
