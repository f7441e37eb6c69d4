{#- Generic test: a model's rules on single columns, checked in one query over the model (a dbt
    node per column and rule made 87 more nodes, about 1.3 s more per build of the demo fleet).
    The rules:
    - not_null: [columns] — never null;
    - non_negative: [columns] — never below zero (floating-point noise of 1e-9 allowed);
    - between: {column: [low, high]} — within low and high, both included;
    - accepted_values: {column: [values]} — one of the values. Strings are compared as quoted
      text (quotes escaped as the engine escapes them: dbt.escape_single_quotes), booleans and
      numbers as literals (Spark refuses a boolean compared with text).
    A null breaks only not_null. A failing row per broken rule, naming the column and the rule,
    with its count of breaking rows. -#}
{% test column_rules(model, not_null=[], non_negative=[], between={}, accepted_values={}) %}
    {%- set rules = [] -%}
    {%- for column in not_null -%}
        {%- do rules.append((column, 'not_null', column ~ ' is null')) -%}
    {%- endfor -%}
    {%- for column in non_negative -%}
        {%- do rules.append((column, 'non_negative', column ~ ' < -0.000000001')) -%}
    {%- endfor -%}
    {%- for column, bounds in between.items() -%}
        {%- set low, high = bounds -%}
        {%- do rules.append(
            (column, 'between', column ~ ' not between ' ~ low ~ ' and ' ~ high)
        ) -%}
    {%- endfor -%}
    {%- for column, values in accepted_values.items() -%}
        {%- set literals = [] -%}
        {%- for value in values -%}
            {%- if value is sameas true or value is sameas false -%}
                {%- do literals.append('true' if value else 'false') -%}
            {%- elif value is number -%}
                {%- do literals.append(value | string) -%}
            {%- else -%}
                {%- do literals.append("'" ~ dbt.escape_single_quotes(value) ~ "'") -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do rules.append(
            (column, 'accepted_values', column ~ ' not in (' ~ literals | join(', ') ~ ')')
        ) -%}
    {%- endfor -%}
    {%- if not rules -%}
        {{ exceptions.raise_compiler_error('column_rules on ' ~ model ~ ' names no rule') }}
    {%- endif %}
    with breaking_rows as (
        select
            {%- for _, _, condition in rules %}
                sum(case when {{ condition }} then 1 else 0 end) as rule_{{ loop.index }}
                {{- "," if not loop.last }}
            {%- endfor %}
        from {{ model }}
    )

    {% for column, rule, _ in rules -%}
        select
            '{{ column }}' as column_name,
            '{{ rule }}' as rule_name,
            rule_{{ loop.index }} as breaking_rows
        from breaking_rows
        where rule_{{ loop.index }} > 0
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
{% endtest %}
