{#- Generic test: none of these columns is ever null. One query over the model for all of
    them (a dbt node per column cost a build ~4 s on two cores); a failing row per column
    that holds nulls, naming it with its count of null rows. -#}
{% test not_null_columns(model, columns) %}
    with null_counts as (
        select
            {%- for column in columns %}
                sum(case when {{ column }} is null then 1 else 0 end) as null_rows_{{ loop.index }}
                {{- "," if not loop.last }}
            {%- endfor %}
        from {{ model }}
    )

    {% for column in columns -%}
        select
            '{{ column }}' as column_name,
            null_rows_{{ loop.index }} as null_rows
        from null_counts
        where null_rows_{{ loop.index }} > 0
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
{% endtest %}
