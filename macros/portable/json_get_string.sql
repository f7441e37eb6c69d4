{#- The string value of a top-level key of a JSON object held in a string column. -#}
{% macro json_get_string(json_column, key) -%}
    {{ return(adapter.dispatch('json_get_string', 'kubeledger')(json_column, key)) }}
{%- endmacro %}

{% macro default__json_get_string(json_column, key) -%}
    json_extract_string({{ json_column }}, '$."{{ key }}"')
{%- endmacro %}

{#- Spark's get_json_object has no bracket notation for keys with dots or slashes
    (`compute.googleapis.com/cores`), so the object is read as a map; a number or a nested
    object comes back as its JSON text, as on DuckDB. -#}
{% macro spark__json_get_string(json_column, key) -%}
    from_json({{ json_column }}, 'map<string,string>')['{{ key }}']
{%- endmacro %}
