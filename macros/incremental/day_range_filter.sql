{#- Restricts an incremental model to the day range of this run (vars `start_date` and
    `end_date`, set by a Dagster partition or `kubeledger build --start/--end`, each checked to
    be a date by date_var). On a full build, or an incremental run without a range, every day
    is (re)computed. -#}
{% macro day_range_filter(date_column) -%}
    {%- set start_date = date_var('start_date') -%}
    {%- if is_incremental() and start_date -%}
        {%- set end_date = date_var('end_date', start_date) -%}
        {{ date_column }} between cast('{{ start_date }}' as date)
            and cast('{{ end_date }}' as date)
    {%- else -%}
        1 = 1
    {%- endif -%}
{%- endmacro %}
