{#- The exchange rate in effect for each row of `source` not in `to_currency` (SPEC §3.3): the
    latest rate of `rates` from the row's `currency` into `to_currency` starting on or before
    its `on_date` column (one rate per from/to/effective_from, so no tie). A query yielding the
    `keys` columns and `rate`; `joined` is the one-row relation that `to_currency` is read
    from (the settings). -#}
{% macro rates_in_effect(source, keys, on_date, joined, to_currency, rates='exchange_rates') -%}
    select
        {%- for key in keys %}
        {{ key }},
        {%- endfor %}
        rate
    from (
        select
            {%- for key in keys %}
            {{ source }}.{{ key }},
            {%- endfor %}
            {{ rates }}.rate,
            row_number() over (
                partition by {% for key in keys -%}
                    {{ source }}.{{ key }}{{ ', ' if not loop.last }}
                {%- endfor %}
                order by {{ rates }}.effective_from desc
            ) as rate_rank
        from {{ source }}
        cross join {{ joined }}
        inner join {{ rates }}
            on
                upper(trim({{ source }}.currency)) = {{ rates }}.from_currency
                and {{ to_currency }} = {{ rates }}.to_currency
                and {{ rates }}.effective_from <= {{ source }}.{{ on_date }}
        where upper(trim({{ source }}.currency)) <> {{ to_currency }}
    ) as ranked
    where rate_rank = 1
{%- endmacro %}
