{#- One row per `key:value` pair of an operator label string
    (`label_app:checkout|label_team:payments`), as a set-returning select expression:
    `select …, {{ split_label_pairs('pod_labels') }} as label_pair from …`. A null string gives
    no rows; an empty one gives one empty pair, which the caller drops. -#}
{% macro split_label_pairs(labels) -%}
    {{ return(adapter.dispatch('split_label_pairs', 'kubeledger')(labels)) }}
{%- endmacro %}

{% macro default__split_label_pairs(labels) -%}
    unnest(string_split({{ labels }}, '|'))
{%- endmacro %}

{% macro spark__split_label_pairs(labels) -%}
    explode(split({{ labels }}, '[|]'))
{%- endmacro %}
