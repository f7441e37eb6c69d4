{#- A stable md5 key over several columns; a null and an empty string hash differently. -#}
{% macro surrogate_key(columns) -%}
    {%- set parts = [] -%}
    {%- for column in columns -%}
        {%- if not loop.first -%}{%- do parts.append("'|'") -%}{%- endif -%}
        {%- do parts.append(
            "coalesce(cast(" ~ column ~ " as " ~ dbt.type_string() ~ "), '<null>')"
        ) -%}
    {%- endfor -%}
    {{ dbt.hash(dbt.concat(parts)) }}
{%- endmacro %}
