{#- A label key as Prometheus / kube-state-metrics sanitize it, without the `label_` prefix:
    `node.kubernetes.io/instance-type` and the operator's
    `label_node_kubernetes_io_instance_type` both give `node_kubernetes_io_instance_type`.
    Used to match user-written selectors (rate card) against operator labels exactly. -#}
{% macro sanitize_label_key(column) -%}
    {{ return(adapter.dispatch('sanitize_label_key', 'kubeledger')(column)) }}
{%- endmacro %}

{% macro default__sanitize_label_key(column) -%}
    regexp_replace(
        regexp_replace(lower({{ column }}), '^label_', ''), '[^a-z0-9]', '_', 'g'
    )
{%- endmacro %}

{% macro spark__sanitize_label_key(column) -%}
    regexp_replace(regexp_replace(lower({{ column }}), '^label_', ''), '[^a-z0-9]', '_')
{%- endmacro %}
