{#- The median of a numeric expression, as an aggregate. -#}
{% macro median(expression) -%}
    {{ return(adapter.dispatch('median', 'kubeledger')(expression)) }}
{%- endmacro %}

{% macro default__median(expression) -%}
    median({{ expression }})
{%- endmacro %}

{% macro spark__median(expression) -%}
    percentile({{ expression }}, 0.5)
{%- endmacro %}
