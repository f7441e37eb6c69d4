{#- The lower-cased column names a raw table has in the warehouse, or none when they cannot be
    known (at parse time, in a unit test, or before the loader has created the table).
    Optional source columns (the AWS `net_` columns, `Cost` vs `CostInBillingCurrency`, …)
    come and go with the files, so staging reads them through `billing_raw_column`, which
    needs this list. -#}
{% macro billing_raw_columns(source_name, table_name) -%}
    {%- if not execute or not graph.get('sources') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set matches = graph.sources.values()
        | selectattr('source_name', 'equalto', source_name)
        | selectattr('name', 'equalto', table_name)
        | list -%}
    {%- if matches | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            "billing_raw_columns: no source " ~ source_name ~ "." ~ table_name
        ) }}
    {%- endif -%}
    {%- set node = matches[0] -%}
    {%- set relation = adapter.get_relation(
        database=node.database, schema=node.schema, identifier=node.identifier
    ) -%}
    {%- if relation is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set names = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do names.append(column.name | lower) -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}
