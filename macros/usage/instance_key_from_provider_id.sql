{#- The key a node's bill lines are matched by, from its provider ID (SPEC §4): the AWS
    instance ID (`aws:///us-east-1a/i-0abc…` → `i-0abc…`), the Google Cloud instance name
    (`gce://project/zone/name` → `name`), the Azure scale set instance `<vmss>_<n>` in lower case
    (the `VMName` Azure bills show; a VM outside a scale set gives its lower-cased name), and for
    any other provider the ID's last path segment. -#}
{% macro instance_key_from_provider_id(provider_id) -%}
    {%- set scale_set_name = scale_set_name_from_provider_id(provider_id) -%}
    {%- set vm_index = azure_vm_index_from_provider_id(provider_id) -%}
    case
        when {{ scale_set_name }} is not null
            then {{ scale_set_name }} || '_' || cast({{ vm_index }} as {{ dbt.type_string() }})
        when lower({{ provider_id }}) like 'azure://%'
            then nullif(regexp_extract(lower({{ provider_id }}), '([^/]+)/?$', 1), '')
        else nullif(regexp_extract({{ provider_id }}, '([^/]+)/?$', 1), '')
    end
{%- endmacro %}
