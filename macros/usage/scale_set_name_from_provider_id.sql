{#- The Azure VM scale set name (`<vmss>`, lower case) of a node's provider ID; null for
    anything that is not a scale set instance. -#}
{% macro scale_set_name_from_provider_id(provider_id) -%}
    nullif(
        regexp_extract(
            lower({{ provider_id }}),
            '^azure://.*/virtualmachinescalesets/([^/]+)/virtualmachines/[^/]+$',
            1
        ),
        ''
    )
{%- endmacro %}
