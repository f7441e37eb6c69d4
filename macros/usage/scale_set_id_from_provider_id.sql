{#- The Azure VM scale set resource ID of a node's provider ID, lower case (Azure resource IDs
    compare case-insensitively), e.g. `/subscriptions/<s>/resourcegroups/<rg>/providers/
    microsoft.compute/virtualmachinescalesets/<vmss>`; null for anything that is not a scale
    set instance. -#}
{% macro scale_set_id_from_provider_id(provider_id) -%}
    {%- set pattern = (
        "'^azure://(/subscriptions/[^/]+/resourcegroups/[^/]+/providers/"
        ~ "microsoft[.]compute/virtualmachinescalesets/[^/]+)/virtualmachines/[^/]+$'"
    ) -%}
    nullif(regexp_extract(lower({{ provider_id }}), {{ pattern }}, 1), '')
{%- endmacro %}
