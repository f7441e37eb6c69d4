{#- One source column of a raw table as a trimmed string, empty text read as null. A column the
    loader did not create (it did not know it, so it kept it in `_extra`) is read from `_extra`.
    `raw_columns` is the list from `billing_raw_columns`; none means "assume it is there". -#}
{% macro billing_raw_column(raw_columns, column_name) -%}
    {%- if raw_columns is none or (column_name | lower) in raw_columns -%}
        nullif(trim({{ adapter.quote(column_name) }}), '')
    {%- else -%}
        nullif(trim({{ json_get_string("nullif(_extra, '')", column_name) }}), '')
    {%- endif -%}
{%- endmacro %}
