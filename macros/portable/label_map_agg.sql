{#- Aggregates key/value rows into one map column (a pod's labels). -#}
{% macro label_map_agg(key_column, value_column) -%}
    {{ return(adapter.dispatch('label_map_agg', 'kubeledger')(key_column, value_column)) }}
{%- endmacro %}

{% macro default__label_map_agg(key_column, value_column) -%}
    map(
        list({{ key_column }} order by {{ key_column }}),
        list({{ value_column }} order by {{ key_column }})
    )
{%- endmacro %}

{% macro spark__label_map_agg(key_column, value_column) -%}
    map_from_entries(
        array_sort(collect_list(struct({{ key_column }}, {{ value_column }})))
    )
{%- endmacro %}
