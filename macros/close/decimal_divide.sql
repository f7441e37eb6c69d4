{#- numerator / denominator as decimal(38, scale), rounded DOWN (toward minus infinity) to
    `scale` decimals, computed exactly; null when the denominator is 0 or null. With
    rounding='half_up' the quotient is rounded half up instead (a half unit goes toward plus
    infinity): for figures shown at their declared scale, such as a factor.

    Why a macro: DuckDB turns decimal / decimal into a double, and Spark rounds a decimal
    quotient half-up to as few as 6 decimals. Both would let a bill line round the wrong way,
    so the quotient is computed in integers: each operand is taken at 10 decimals (operands
    with more decimals are rounded to 10) as a whole number of 1e-10 units, and the integer
    floor of units(numerator) * 10^scale / units(denominator) is scaled back to `scale`
    decimals. Bounds: |operand| < 10^18 and scale <= 10; past them the engine raises an
    overflow error (DuckDB) or yields null (Spark outside ANSI mode), never a wrong number. -#}
{% macro decimal_divide(numerator, denominator, scale=10, rounding='floor') -%}
    {%- if scale is not number or scale < 0 or scale > 10 -%}
        {{ exceptions.raise_compiler_error(
            "decimal_divide: scale must be a whole number from 0 to 10, got " ~ scale
        ) }}
    {%- endif -%}
    {%- if rounding not in ('floor', 'half_up') -%}
        {{ exceptions.raise_compiler_error(
            "decimal_divide: rounding must be 'floor' or 'half_up', got " ~ rounding
        ) }}
    {%- endif -%}
    {{ return(adapter.dispatch('decimal_divide', 'kubeledger')(
        numerator, denominator, scale, rounding
    )) }}
{%- endmacro %}

{#- Half up from the floor q: the remainder r = n - q * d has the sign of d and |r| < |d|, so
    the exact quotient's fraction is r / d in [0, 1); it rounds up when 2 |r| >= |d|. -#}
{% macro _decimal_divide_half_up_step(floor_units, numerator_units, denominator_units) -%}
    case
        when
            abs(2 * ({{ numerator_units }} - {{ floor_units }} * {{ denominator_units }}))
            >= abs({{ denominator_units }})
            then 1
        else 0
    end
{%- endmacro %}

{% macro default__decimal_divide(numerator, denominator, scale, rounding='floor') -%}
    {%- set numerator_units -%}
        (cast(cast({{ numerator }} as decimal(38, 10)) * 10000000000 as hugeint)
            * cast('1{{ "0" * scale }}' as hugeint))
    {%- endset -%}
    {%- set denominator_units -%}
        cast(cast(nullif({{ denominator }}, 0) as decimal(38, 10)) * 10000000000 as hugeint)
    {%- endset -%}
    {#- hugeint // truncates toward zero; step down once more when the quotient is negative
        and inexact, which makes it a floor. -#}
    {%- set floor_units -%}
        (({{ numerator_units }} // {{ denominator_units }})
            - case
                when
                    {{ numerator_units }} % {{ denominator_units }} <> 0
                    and ({{ numerator_units }} < 0) <> ({{ denominator_units }} < 0)
                    then 1
                else 0
            end)
    {%- endset -%}
    cast(
        cast(
            {{ floor_units }}
            {%- if rounding == 'half_up' %}
            + {{ kubeledger._decimal_divide_half_up_step(
                floor_units, numerator_units, denominator_units
            ) }}
            {%- endif %}
            as decimal(38, 0)
        ) * cast('{{ "1" if scale == 0 else "0." ~ "0" * (scale - 1) ~ "1" }}'
            as decimal(38, {{ scale }}))
        as decimal(38, {{ scale }})
    )
{%- endmacro %}

{% macro spark__decimal_divide(numerator, denominator, scale, rounding='floor') -%}
    {#- Spark has no 128-bit integer: decimal(38, 0) holds the units. Its decimal quotient is
        rounded half-up to 6 decimals, so its floor is the true floor or one above it; one
        exact integer comparison corrects it. -#}
    {%- set numerator_units -%}
        (cast(cast({{ numerator }} as decimal(38, 10)) * 10000000000 as decimal(38, 0))
            * cast('1{{ "0" * scale }}' as decimal(38, 0)))
    {%- endset -%}
    {%- set denominator_units -%}
        cast(cast(nullif({{ denominator }}, 0) as decimal(38, 10)) * 10000000000 as decimal(38, 0))
    {%- endset -%}
    {%- set approximate -%}
        cast(floor({{ numerator_units }} / {{ denominator_units }}) as decimal(38, 0))
    {%- endset -%}
    {%- set floor_units -%}
        ({{ approximate }}
            - case
                when
                    {{ denominator_units }} > 0
                    and {{ approximate }} * {{ denominator_units }} > {{ numerator_units }}
                    then 1
                when
                    {{ denominator_units }} < 0
                    and {{ approximate }} * {{ denominator_units }} < {{ numerator_units }}
                    then 1
                else 0
            end)
    {%- endset -%}
    cast(
        cast(
            {{ floor_units }}
            {%- if rounding == 'half_up' %}
            + {{ kubeledger._decimal_divide_half_up_step(
                floor_units, numerator_units, denominator_units
            ) }}
            {%- endif %}
            as decimal(26, 0)
        ) * cast('{{ "1" if scale == 0 else "0." ~ "0" * (scale - 1) ~ "1" }}'
            as decimal(11, {{ scale }}))
        as decimal(38, {{ scale }})
    )
{%- endmacro %}
