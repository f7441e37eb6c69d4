{#- Restricts a model of the monthly close to the month being closed: var `close_month`
    (`YYYY-MM`, set by `kubeledger close`). Without it every month in the data is built. -#}
{% macro close_month_filter(date_column) -%}
    {%- set month = var('close_month', none) -%}
    {%- if month -%}
        {%- set bounds = close_month_bounds(month) -%}
        {{ date_column }} >= cast('{{ bounds[0] }}' as date)
        and {{ date_column }} < cast('{{ bounds[1] }}' as date)
    {%- else -%}
        1 = 1
    {%- endif -%}
{%- endmacro %}
