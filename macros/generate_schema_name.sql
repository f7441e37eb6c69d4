{#- Schemas are named by layer (staging, intermediate, marts, seeds), not prefixed with the
    target schema, so BI tools and analysts find `marts.fct_...` on every warehouse. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
