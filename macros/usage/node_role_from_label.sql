{#- The node role a single node label implies, or null (SPEC §3.1): the keys
    `node-role.kubernetes.io/control-plane` and `…/master` give `control_plane`,
    `node-role.kubernetes.io/infra` gives `infra`, whatever their (usually empty) value; the
    older `kubernetes.io/role` label gives the role it names. Works on the raw key as written
    or as the operator sanitizes it (`label_node_role_kubernetes_io_control_plane`). -#}
{% macro node_role_from_label(raw_label_key, label_value) -%}
    case
        when {{ regexp_matches(
            'lower(' ~ raw_label_key ~ ')',
            "'^(label_)?node[-_.]role[-_.]kubernetes[-_.]io[/_](control[-_]plane|master)$'"
        ) }} then 'control_plane'
        when {{ regexp_matches(
            'lower(' ~ raw_label_key ~ ')',
            "'^(label_)?node[-_.]role[-_.]kubernetes[-_.]io[/_]infra$'"
        ) }} then 'infra'
        when {{ regexp_matches(
            'lower(' ~ raw_label_key ~ ')', "'^(label_)?kubernetes[-_.]io[/_]role$'"
        ) }} then {{ normalize_node_role(label_value) }}
    end
{%- endmacro %}
