{#- Restricts an incremental model to the day range of this run (vars `start_date` and
    `end_date`, set by a Dagster partition or `kubeledger build --start/--end`). On a full
    build, or an incremental run without a range, every day is (re)computed. -#}
{% macro day_range_filter(date_column) -%}
    {%- if is_incremental() and var('start_date', none) -%}
        {{ date_column }} between cast('{{ var("start_date") }}' as date)
            and cast('{{ var("end_date", none) or var("start_date") }}' as date)
    {%- else -%}
        1 = 1
    {%- endif -%}
{%- endmacro %}
