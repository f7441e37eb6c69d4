{#- Writes every table and view of a schema to `<location>/<name>/` as Parquet: `dbt
    run-operation export_schema_to_parquet --args '{schema: marts, location: /…/marts}'`.
    The Spark parity test reads the marts this way, with DuckDB. -#}
{% macro export_schema_to_parquet(schema, location) -%}
    {%- set listed = run_query('show tables in ' ~ adapter.quote(schema)) -%}
    {%- set names = [] -%}
    {%- for row in listed -%}
        {%- if not row['isTemporary'] -%}
            {%- do names.append(row['tableName']) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for name in names | sort -%}
        {%- do adapter.execute(
            "insert overwrite directory '" ~ location ~ "/" ~ name ~ "' using parquet select * from "
            ~ adapter.quote(schema) ~ '.' ~ adapter.quote(name)
        ) -%}
    {%- endfor -%}
    {{ log('exported ' ~ (names | length) ~ ' relations of ' ~ schema ~ ' to ' ~ location, info=true) }}
{%- endmacro %}
