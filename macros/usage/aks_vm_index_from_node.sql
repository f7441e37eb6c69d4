{#- The scale set instance index of an AKS node, from its name: the six characters after
    `vmss` are the index in base 36 (`aks-nodepool1-12345678-vmss00000a` → 10); null for other
    names. -#}
{% macro aks_vm_index_from_node(node) -%}
    {%- set suffix = 'substr(lower(' ~ node ~ '), length(' ~ node ~ ') - 5, 6)' -%}
    case
        when {{ aks_scale_set_name_from_node(node) }} is not null
            then {{ base36_to_bigint(suffix, 6) }}
    end
{%- endmacro %}
