{#- An amount in the billing currency (SPEC §3.3): `amount` times `rate` in decimal, rounded
    half up to the 10 places of the billing columns; `amount` itself when `rate` is null (the
    line is in the billing currency, or no rate covers it). The amount is narrowed to
    decimal(24, 10) (below 10^14) so that the product of it and a decimal(16, 8) rate keeps its
    18 places on Spark too (Spark cuts a product wider than 38 digits to 6 places). -#}
{% macro convert_money(amount, rate) -%}
    cast(
        case
            when {{ rate }} is null then {{ amount }}
            else round(cast({{ amount }} as decimal(24, 10)) * {{ rate }}, 10)
        end as decimal(38, 10)
    )
{%- endmacro %}
