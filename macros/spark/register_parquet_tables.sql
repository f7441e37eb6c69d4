{#- Registers Parquet folders as tables: `dbt run-operation register_parquet_tables --args
    '{tables: [{schema: raw, name: koku_pod_usage, location: /…/raw/koku_pod_usage,
    columns: [{name: …, type: string}, …], partitioned_by: _partition_date}]}'`.
    The Spark loader (orchestration/kubeledger/spark) calls it after writing the raw and
    config tables, so the tables live in the metastore of the profile's Spark target
    (adapter.execute, not run_query: a statement without a result set has no rows to fetch
    through the Thrift Server). A table
    with `columns` is declared with them (a partitioned table may have no file yet), one with
    `partitioned_by` has its day folders registered as partitions. -#}
{% macro register_parquet_tables(tables) -%}
    {%- set schemas = tables | map(attribute='schema') | unique | list -%}
    {%- for schema in schemas -%}
        {%- do adapter.execute('create schema if not exists ' ~ adapter.quote(schema)) -%}
    {%- endfor -%}
    {%- for table in tables -%}
        {%- set name = adapter.quote(table.schema) ~ '.' ~ adapter.quote(table.name) -%}
        {%- set columns = [] -%}
        {%- for column in table.get('columns') or [] -%}
            {%- do columns.append(adapter.quote(column.name) ~ ' ' ~ column.type) -%}
        {%- endfor -%}
        {%- do adapter.execute('drop table if exists ' ~ name) -%}
        {%- do adapter.execute(
            'create table ' ~ name
            ~ (' (' ~ columns | join(', ') ~ ')' if columns else '')
            ~ ' using parquet'
            ~ (' partitioned by (' ~ adapter.quote(table.partitioned_by) ~ ')'
               if table.get('partitioned_by') else '')
            ~ " location '" ~ table.location ~ "'"
        ) -%}
        {%- if table.get('partitioned_by') -%}
            {%- do adapter.execute('alter table ' ~ name ~ ' recover partitions') -%}
        {%- endif -%}
    {%- endfor -%}
    {{ log('registered ' ~ (tables | length) ~ ' Parquet tables', info=true) }}
{%- endmacro %}
