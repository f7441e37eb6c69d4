{#- A source column that producers may leave out (the operator's `node_role`, limits, the
    optional columns of the supplementary CSVs): the quoted column when the loaded table has
    it, else a typed null, so a staging model works whichever variant was loaded. At parse
    time, or when the table does not exist yet, the column is assumed present.
    The table is found through the graph, not `source()`: a unit test replaces `source()` by
    its input, which dbt builds with the real table's columns, so the answer must come from
    the real table. Unit tests have no graph; there the source is assumed in `raw_schema`. -#}
{% macro source_column_or_null(source_name, table_name, column_name, raw_schema='raw') -%}
    {%- set quoted = adapter.quote(column_name) -%}
    {%- if not execute -%}
        {{ return(quoted) }}
    {%- endif -%}
    {%- set source_nodes = (graph.get('sources') or {}).values()
        | selectattr('source_name', 'equalto', source_name)
        | selectattr('name', 'equalto', table_name)
        | list -%}
    {%- if source_nodes | length > 0 -%}
        {%- set relation = adapter.get_relation(
            database=source_nodes[0].database,
            schema=source_nodes[0].schema,
            identifier=source_nodes[0].identifier,
        ) -%}
    {%- else -%}
        {%- set relation = adapter.get_relation(
            database=target.database, schema=raw_schema, identifier=table_name
        ) -%}
    {%- endif -%}
    {%- if relation is none -%}
        {{ return(quoted) }}
    {%- endif -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name')
        | map('lower') | list -%}
    {%- if column_name | lower in names -%}
        {{ return(quoted) }}
    {%- else -%}
        {{ return('cast(null as ' ~ dbt.type_string() ~ ')') }}
    {%- endif -%}
{%- endmacro %}
