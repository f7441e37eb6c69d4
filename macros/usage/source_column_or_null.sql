{#- A source column that producers may leave out (the operator's `node_role`, limits, the
    optional columns of the supplementary CSVs): the quoted column when the relation has it,
    else a typed null, so a staging model works whichever variant was loaded. The relation's
    columns are read at run time; when they cannot be (parsing, a unit test's input), the
    column is assumed present. -#}
{% macro source_column_or_null(relation, column_name) -%}
    {%- set quoted = adapter.quote(column_name) -%}
    {%- if not execute -%}
        {{ quoted }}
    {%- else -%}
        {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name')
            | map('lower') | list -%}
        {%- if names | length == 0 or column_name | lower in names -%}
            {{ quoted }}
        {%- else -%}
            cast(null as {{ dbt.type_string() }})
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
