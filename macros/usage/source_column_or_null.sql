{#- A source column that producers may leave out (the operator's `node_role`, limits, the
    optional columns of the supplementary CSVs): the quoted column when the loaded table has
    it, else a typed null, so a staging model works whichever variant was loaded. The table is
    looked up through the graph rather than `source()`, which a unit test replaces by its
    input (built with the table's columns, so the answer is the same). At parse time, or when
    the table does not exist yet, the column is assumed present. -#}
{% macro source_column_or_null(source_name, table_name, column_name) -%}
    {%- set quoted = adapter.quote(column_name) -%}
    {%- if not execute -%}
        {{ quoted }}
    {%- else -%}
        {%- set source_node = graph.sources.values()
            | selectattr('source_name', 'equalto', source_name)
            | selectattr('name', 'equalto', table_name)
            | first -%}
        {%- set relation = adapter.get_relation(
            database=source_node.database,
            schema=source_node.schema,
            identifier=source_node.identifier,
        ) -%}
        {%- if relation is none -%}
            {{ quoted }}
        {%- else -%}
            {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name')
                | map('lower') | list -%}
            {%- if column_name | lower in names -%}
                {{ quoted }}
            {%- else -%}
                cast(null as {{ dbt.type_string() }})
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
