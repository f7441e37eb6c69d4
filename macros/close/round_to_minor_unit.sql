{#- An amount rounded (half up, as a decimal cast rounds) to its currency's minor unit and typed
    as bill money, decimal(38, 3) (SPEC §1.2: JPY 0 digits, USD 2, KWD 3). `digits` is SQL
    giving the unit's digits (a column read from the currency_minor_units seed, or a literal);
    any other value gives null, so a bill in a currency the seed does not list never balances
    and the close refuses it (assert_bill_currency_has_minor_unit). -#}
{% macro round_to_minor_unit(expression, digits) -%}
    case {{ digits }}
        when 0 then cast(cast({{ expression }} as decimal(38, 0)) as decimal(38, 3))
        when 1 then cast(cast({{ expression }} as decimal(38, 1)) as decimal(38, 3))
        when 2 then cast(cast({{ expression }} as decimal(38, 2)) as decimal(38, 3))
        when 3 then cast({{ expression }} as decimal(38, 3))
    end
{%- endmacro %}

{#- One minor unit of a currency with `digits` digits, as decimal(38, 3): 1, 0.1, 0.01, 0.001. -#}
{% macro minor_unit_size(digits) -%}
    case {{ digits }}
        when 0 then cast(1 as decimal(38, 3))
        when 1 then cast(0.1 as decimal(38, 3))
        when 2 then cast(0.01 as decimal(38, 3))
        when 3 then cast(0.001 as decimal(38, 3))
    end
{%- endmacro %}
