{#- The `YYYY-MM` text of a date's month: how a bill month is named everywhere (the close
    commands' `--month`, the sealed tables' key). -#}
{% macro year_month(date_column) -%}
    {{ return(adapter.dispatch('year_month', 'kubeledger')(date_column)) }}
{%- endmacro %}

{% macro default__year_month(date_column) -%}
    strftime(cast({{ date_column }} as date), '%Y-%m')
{%- endmacro %}

{% macro spark__year_month(date_column) -%}
    date_format(cast({{ date_column }} as date), 'yyyy-MM')
{%- endmacro %}
