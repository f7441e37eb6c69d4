{#- True when every given relation exists in the warehouse (checked at run time; false while
    parsing). The sealed store (schema `sealed`) is created by `kubeledger close`, outside dbt:
    until the first seal it does not exist, and the bill marts show drafts only. -#}
{% macro sealed_store_exists(relations) -%}
    {%- if not execute -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for relation in relations -%}
        {%- set found = adapter.get_relation(
            database=relation.database,
            schema=relation.schema,
            identifier=relation.identifier,
        ) -%}
        {%- if found is none -%}
            {{ return(false) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(true) }}
{%- endmacro %}
