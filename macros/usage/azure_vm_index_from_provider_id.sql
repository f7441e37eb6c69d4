{#- The instance index `<n>` of an Azure scale set VM's provider ID
    (`…/virtualMachineScaleSets/<vmss>/virtualMachines/<n>`), as an integer; null otherwise. -#}
{% macro azure_vm_index_from_provider_id(provider_id) -%}
    cast(
        nullif(
            regexp_extract(
                lower({{ provider_id }}),
                '^azure://.*/virtualmachinescalesets/[^/]+/virtualmachines/([0-9]+)$',
                1
            ),
            ''
        ) as {{ dbt.type_bigint() }}
    )
{%- endmacro %}
