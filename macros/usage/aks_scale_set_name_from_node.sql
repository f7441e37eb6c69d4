{#- The VM scale set of an AKS node, from its name when nothing better is known (SPEC §3.2):
    `aks-<pool>-<id>-vmss<6 base-36 chars>` → `aks-<pool>-<id>-vmss`; null for other names. -#}
{% macro aks_scale_set_name_from_node(node) -%}
    nullif(
        regexp_extract(lower({{ node }}), '^(aks-[a-z0-9]+-[0-9]+-vmss)[0-9a-z]{6}$', 1), ''
    )
{%- endmacro %}
