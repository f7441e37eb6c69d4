{#- A node role as the operator or a label writes it, as one of `worker`, `control_plane`,
    `infra` (SPEC §3.1, §5): `master` and `control-plane` are the control plane; any other
    non-empty role runs workloads and counts as `worker`. Empty or null gives null, so the
    caller can fall back to the node's labels. -#}
{% macro normalize_node_role(role) -%}
    case
        when nullif(trim({{ role }}), '') is null then null
        when replace(replace(lower(trim({{ role }})), '-', '_'), ' ', '_')
            in ('master', 'control_plane', 'controlplane') then 'control_plane'
        when lower(trim({{ role }})) in ('infra', 'infrastructure') then 'infra'
        else 'worker'
    end
{%- endmacro %}
