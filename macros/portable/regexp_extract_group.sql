{#- The text of capture group `group` of the first match of the regular expression, '' when
    it does not match. -#}
{% macro regexp_extract_group(column, pattern, group=1) -%}
    {{ return(adapter.dispatch('regexp_extract_group', 'kubeledger')(column, pattern, group)) }}
{%- endmacro %}

{% macro default__regexp_extract_group(column, pattern, group) -%}
    regexp_extract({{ column }}, {{ pattern }}, {{ group }})
{%- endmacro %}

{% macro spark__regexp_extract_group(column, pattern, group) -%}
    coalesce(regexp_extract({{ column }}, {{ pattern }}, {{ group }}), '')
{%- endmacro %}
