{#- sum(expression) as a double that does not depend on the order the engine adds the rows in
    (SPEC §1.3): each value is taken as decimal(38, 18) and the decimals are summed exactly,
    then the sum is turned back into a double. A double sum in a parallel aggregate can differ
    in its last bits from run to run (thread count, row order), and a bill summed from such
    figures can then move a cent on a rounding boundary. `over` makes it a window sum:
    `exact_sum('claim', over='partition by node, interval_start')`. Values must stay below
    1e20 in magnitude (money, hours and ratios do). -#}
{% macro exact_sum(expression, over=none) -%}
    cast(
        sum(cast({{ expression }} as decimal(38, 18)))
        {%- if over is not none %} over ({{ over }}){% endif %}
        as double
    )
{%- endmacro %}
