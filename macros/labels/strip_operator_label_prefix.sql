{#- A raw label key without the `label_` prefix the koku operator (Prometheus /
    kube-state-metrics) puts on every label; other keys unchanged. Dropping this prefix is
    not a rewrite of the key for the collision rule of SPEC §6. -#}
{% macro strip_operator_label_prefix(raw_key) -%}
    case
        when substr({{ raw_key }}, 1, 6) = 'label_' then substr({{ raw_key }}, 7)
        else {{ raw_key }}
    end
{%- endmacro %}
