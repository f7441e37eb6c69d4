{#- The number of days in the month of a date. -#}
{% macro days_in_month(date_column) -%}
    {{ return(adapter.dispatch('days_in_month', 'kubeledger')(date_column)) }}
{%- endmacro %}

{% macro default__days_in_month(date_column) -%}
    dayofmonth(last_day(cast({{ date_column }} as date)))
{%- endmacro %}

{% macro spark__days_in_month(date_column) -%}
    dayofmonth(last_day(cast({{ date_column }} as date)))
{%- endmacro %}
