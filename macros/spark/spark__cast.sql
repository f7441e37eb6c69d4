{#- dbt's `cast()` on Spark, taking DuckDB type names. The marts' contracts declare DuckDB
    types (`varchar`, `map(varchar, varchar)`, `varchar[]`) and dbt checks a contract by casting
    null to each declared type, so this one translation (varchar / text -> string,
    map(k, v) -> map<k, v>, t[] -> array<t>) lets every enforced contract run unchanged on
    Spark, which has no unsized varchar. -#}
{% macro spark__cast(field, type) -%}
    {%- set re = modules.re -%}
    {%- set spark_type = re.sub('(?i)\\b(varchar|text)\\b', 'string', type | trim) -%}
    {%- set spark_type = re.sub('(?i)^map\\((.*)\\)$', 'map<\\1>', spark_type) -%}
    {%- set spark_type = re.sub('^(\\w+)\\[\\]$', 'array<\\1>', spark_type) -%}
    cast({{ field }} as {{ spark_type }})
{%- endmacro %}
