{#- a / b rounded to `digits` decimals (a `_ratio` column people read), or null when b is 0 or
    null. Marts keep the exact numerator and denominator as money columns, so arithmetic never
    needs the rounded ratio. -#}
{% macro rounded_ratio(numerator, denominator, digits=6) -%}
    round({{ safe_divide(numerator, denominator) }}, {{ digits }})
{%- endmacro %}
