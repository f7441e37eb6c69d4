{#- dbt's `listagg()` on Spark, keeping the order: dbt-spark's own ignores `order by` (a
    warning, then collect_list order), which would make lists such as the close's missing
    dates differ from DuckDB's. Rows are collected with their sort keys, sorted, joined.
    `order_by_clause` is `order by <column or expression>[, …]` with ascending keys; null
    measures are skipped, as string_agg does. -#}
{% macro spark__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
    {%- if order_by_clause -%}
        {%- set re = modules.re -%}
        {%- set keys_text = re.sub('(?i)^\\s*order\\s+by\\s+', '', order_by_clause) -%}
        {%- if re.search('(?i)\\b(desc|nulls)\\b', keys_text) -%}
            {{ exceptions.raise_compiler_error(
                "spark__listagg supports ascending keys only, got: " ~ order_by_clause
            ) }}
        {%- endif -%}
        {%- set keys = [keys_text] if '(' in keys_text else keys_text.split(',') -%}
        {%- set fields = [] -%}
        {%- for key in keys -%}
            {%- do fields.append(key | replace(' asc', '') | trim ~ ' as k' ~ loop.index) -%}
        {%- endfor -%}
        {%- set collected -%}
            transform(
                filter(
                    array_sort(collect_list(struct({{ fields | join(', ') }}, {{ measure }} as v))),
                    x -> x.v is not null
                ),
                x -> x.v
            )
        {%- endset -%}
    {%- else -%}
        {%- set collected = 'collect_list(' ~ measure ~ ')' -%}
    {%- endif -%}
    {%- if limit_num -%}
        {%- set collected = 'slice(' ~ collected ~ ', 1, ' ~ limit_num ~ ')' -%}
    {%- endif -%}
    array_join({{ collected }}, {{ delimiter_text }})
{%- endmacro %}
