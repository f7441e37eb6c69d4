{#- The first day of a `YYYY-MM` month and the first day of the next, as ISO date strings;
    anything else than `YYYY-MM` is a compilation error naming the var. -#}
{% macro close_month_bounds(month) -%}
    {%- set text = month | string | trim -%}
    {%- if not modules.re.match('^[0-9]{4}-(0[1-9]|1[0-2])$', text) -%}
        {{ exceptions.raise_compiler_error(
            "var close_month must be YYYY-MM (e.g. 2026-10), got '" ~ text ~ "'"
        ) }}
    {%- endif -%}
    {%- set year = text[0:4] | int -%}
    {%- set month_number = text[5:7] | int -%}
    {%- set next_year = year + 1 if month_number == 12 else year -%}
    {%- set next_month = 1 if month_number == 12 else month_number + 1 -%}
    {{ return([
        text ~ '-01',
        '%04d-%02d-01' | format(next_year, next_month),
    ]) }}
{%- endmacro %}
