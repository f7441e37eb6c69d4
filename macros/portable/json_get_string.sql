{#- The string value of a top-level key of a JSON object held in a string column. -#}
{% macro json_get_string(json_column, key) -%}
    {{ return(adapter.dispatch('json_get_string', 'kubeledger')(json_column, key)) }}
{%- endmacro %}

{% macro default__json_get_string(json_column, key) -%}
    json_extract_string({{ json_column }}, '$."{{ key }}"')
{%- endmacro %}

{% macro spark__json_get_string(json_column, key) -%}
    get_json_object({{ json_column }}, '$[''{{ key }}'']')
{%- endmacro %}
