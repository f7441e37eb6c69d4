{#- A JSON array of `{"key": …, "value": …}` objects (Google's `labels`, `system_labels`) as a
    JSON object string `{"key": "value", …}`; null stays null. -#}
{% macro billing_key_value_array_to_json(json_column) -%}
    {{ return(adapter.dispatch('billing_key_value_array_to_json', 'kubeledger')(json_column)) }}
{%- endmacro %}

{% macro default__billing_key_value_array_to_json(json_column) -%}
    cast(
        to_json(
            map_from_entries(
                from_json(
                    nullif({{ json_column }}, ''), '[{"key": "VARCHAR", "value": "VARCHAR"}]'
                )
            )
        ) as varchar
    )
{%- endmacro %}

{% macro spark__billing_key_value_array_to_json(json_column) -%}
    to_json(
        map_from_entries(from_json({{ json_column }}, 'array<struct<key:string,value:string>>'))
    )
{%- endmacro %}
