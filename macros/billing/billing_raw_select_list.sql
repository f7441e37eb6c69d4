{#- The select list that reads a raw billing table's source columns under our names: one
    `<billing_raw_column> as <our name>` per (source column, our name) pair, comma-separated,
    each on its own line. Values stay strings; the staging model casts them. -#}
{% macro billing_raw_select_list(source_name, table_name, renames) -%}
    {%- set raw_columns = billing_raw_columns(source_name, table_name) -%}
    {%- for source_column, our_name in renames %}
        {{ billing_raw_column(raw_columns, source_column) }} as {{ our_name }}
        {{- ',' if not loop.last }}
    {%- endfor %}
{%- endmacro %}
