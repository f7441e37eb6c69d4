{#- The value of a fixed-width base-36 string (digits then lower-case letters) as a bigint.
    Neither engine has a portable base conversion, so the digits are summed by position. -#}
{% macro base36_to_bigint(expression, width) -%}
    {%- set digits = "'0123456789abcdefghijklmnopqrstuvwxyz'" -%}
    cast((
        {%- for position in range(1, width + 1) %}
        {% if not loop.first %}+ {% endif -%}
        (instr({{ digits }}, substr({{ expression }}, {{ position }}, 1)) - 1)
            * {{ 36 ** (width - position) }}
        {%- endfor %}
    ) as {{ dbt.type_bigint() }})
{%- endmacro %}
