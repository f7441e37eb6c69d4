{#- An amount in the billing currency (SPEC §3.3): `amount` times `rate` in decimal, rounded
    half up to the 10 places of the billing columns; `amount` itself when `rate` is null (the
    line is in the billing currency, or no rate covers it). The amount is narrowed to
    decimal(23, 10) (below 10^13) so that its product with a decimal(14, 8) rate is at most 38
    digits wide and keeps all 18 places on Spark too (Spark cuts a wider product to 6 places,
    which would round twice). -#}
{% macro convert_money(amount, rate) -%}
    cast(
        case
            when {{ rate }} is null then {{ amount }}
            else round(cast({{ amount }} as decimal(23, 10)) * {{ rate }}, 10)
        end as decimal(38, 10)
    )
{%- endmacro %}
