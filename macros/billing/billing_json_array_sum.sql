{#- The sum, as decimal(38, 10), of one numeric field over the objects of a JSON array held in a
    string column (Google's `credits`), optionally only the objects whose `type_field` is one of
    `type_values`. An empty, null or absent array sums to 0. -#}
{% macro billing_json_array_sum(
    json_column, amount_field='amount', type_field='type', type_values=none
) -%}
    {{ return(adapter.dispatch('billing_json_array_sum', 'kubeledger')(
        json_column, amount_field, type_field, type_values
    )) }}
{%- endmacro %}

{% macro default__billing_json_array_sum(json_column, amount_field, type_field, type_values) -%}
    {%- set items -%}
        from_json(
            nullif({{ json_column }}, ''),
            '[{"{{ amount_field }}": "VARCHAR", "{{ type_field }}": "VARCHAR"}]'
        )
    {%- endset -%}
    {%- if type_values is not none -%}
        {%- set items -%}
            list_filter(
                {{ items }},
                lambda item: struct_extract(item, '{{ type_field }}')
                    in ('{{ type_values | join("', '") }}')
            )
        {%- endset -%}
    {%- endif -%}
    coalesce(
        list_sum(
            list_transform(
                {{ items }},
                lambda item: cast(struct_extract(item, '{{ amount_field }}') as decimal(38, 10))
            )
        ),
        cast(0 as decimal(38, 10))
    )
{%- endmacro %}

{% macro spark__billing_json_array_sum(json_column, amount_field, type_field, type_values) -%}
    {%- set items -%}
        from_json(
            {{ json_column }},
            'array<struct<{{ amount_field }}:string,{{ type_field }}:string>>'
        )
    {%- endset -%}
    {%- if type_values is not none -%}
        {%- set items -%}
            filter(
                {{ items }},
                item -> item.{{ type_field }} in ('{{ type_values | join("', '") }}')
            )
        {%- endset -%}
    {%- endif -%}
    coalesce(
        aggregate(
            {{ items }},
            cast(0 as decimal(38, 10)),
            (total, item) -> cast(
                total + cast(item.{{ amount_field }} as decimal(38, 10)) as decimal(38, 10)
            )
        ),
        cast(0 as decimal(38, 10))
    )
{%- endmacro %}
