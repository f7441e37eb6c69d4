{#- A sort key that orders strings by their UTF-8 bytes, whatever collation the session or
    column has: line IDs are "compared byte-wise" (SPEC §9), so a tie for a carried cent goes
    to the same line on every engine and every locale. -#}
{% macro bytewise_sort_key(column) -%}
    {{ return(adapter.dispatch('bytewise_sort_key', 'kubeledger')(column)) }}
{%- endmacro %}

{% macro default__bytewise_sort_key(column) -%}
    encode({{ column }})
{%- endmacro %}

{% macro spark__bytewise_sort_key(column) -%}
    cast({{ column }} as binary)
{%- endmacro %}
