{#- True when the string matches the regular expression anywhere (not anchored). -#}
{% macro regexp_matches(column, pattern) -%}
    {{ return(adapter.dispatch('regexp_matches', 'kubeledger')(column, pattern)) }}
{%- endmacro %}

{% macro default__regexp_matches(column, pattern) -%}
    regexp_matches({{ column }}, {{ pattern }})
{%- endmacro %}

{% macro spark__regexp_matches(column, pattern) -%}
    ({{ column }} rlike {{ pattern }})
{%- endmacro %}
