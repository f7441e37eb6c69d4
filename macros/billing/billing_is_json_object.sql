{#- True when a string column holds a well-formed JSON object; false for anything else (null,
    empty text, a bare list of pairs without braces, malformed text), never an error. -#}
{% macro billing_is_json_object(column) -%}
    {{ return(adapter.dispatch('billing_is_json_object', 'kubeledger')(column)) }}
{%- endmacro %}

{% macro default__billing_is_json_object(column) -%}
    coalesce(case when json_valid({{ column }}) then json_type({{ column }}) = 'OBJECT' end, false)
{%- endmacro %}

{% macro spark__billing_is_json_object(column) -%}
    coalesce(from_json({{ column }}, 'map<string,string>') is not null, false)
{%- endmacro %}
