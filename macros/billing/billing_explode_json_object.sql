{#- A select statement with one row per key of a JSON object column: `id_column`, `tag_key`
    (as written) and `tag_value` (nested values as JSON text). Rows whose column is not a JSON
    object give no rows. -#}
{% macro billing_explode_json_object(relation, id_column, json_column) -%}
    {{ return(adapter.dispatch('billing_explode_json_object', 'kubeledger')(
        relation, id_column, json_column
    )) }}
{%- endmacro %}

{% macro default__billing_explode_json_object(relation, id_column, json_column) -%}
    select
        {{ id_column }},
        entry.key as tag_key,
        entry.value as tag_value
    from (
        select
            {{ id_column }},
            unnest(
                map_entries(json_transform({{ json_column }}, '"MAP(VARCHAR, VARCHAR)"'))
            ) as entry
        from {{ relation }}
        where {{ billing_is_json_object(json_column) }}
    ) as exploded
{%- endmacro %}

{% macro spark__billing_explode_json_object(relation, id_column, json_column) -%}
    select
        {{ id_column }},
        tag_key,
        tag_value
    from {{ relation }}
    lateral view explode(from_json({{ json_column }}, 'map<string,string>')) exploded
        as tag_key, tag_value
{%- endmacro %}
