{#- dbt's `cast()` on Spark. Spark has no unsized `varchar`, and the marts' contracts declare
    `data_type: varchar` (DuckDB's name): dbt checks a contract by casting null to each
    declared type, so mapping `varchar` / `text` to `string` here lets every enforced contract
    run unchanged on Spark. -#}
{% macro spark__cast(field, type) -%}
    {%- set spark_type = 'string' if type | trim | lower in ('varchar', 'text') else type -%}
    cast({{ field }} as {{ spark_type }})
{%- endmacro %}
