{#- A struct of named fields, compared field by field in the order given (the first field
    first): `min` / `max_by` over it pick a row by several columns at once, in one grouped
    aggregate instead of a window that sorts every row. `fields` is a list of
    (name, SQL expression) pairs. -#}
{% macro ordered_struct(fields) -%}
    {{ return(adapter.dispatch('ordered_struct', 'kubeledger')(fields)) }}
{%- endmacro %}

{% macro default__ordered_struct(fields) -%}
    struct_pack(
        {%- for name, expression in fields %}
        {{ name }} := {{ expression }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    )
{%- endmacro %}

{% macro spark__ordered_struct(fields) -%}
    named_struct(
        {%- for name, expression in fields %}
        '{{ name }}', {{ expression }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    )
{%- endmacro %}
