{#- A tag key normalized the way kubeledger.config normalizes keys: lower case, a leading
    `user:` or `user_` dropped, every character outside [a-z0-9] replaced by `_`. -#}
{% macro billing_normalize_tag_key(column) -%}
    {{ return(adapter.dispatch('billing_normalize_tag_key', 'kubeledger')(column)) }}
{%- endmacro %}

{% macro default__billing_normalize_tag_key(column) -%}
    regexp_replace(regexp_replace(lower({{ column }}), '^user[:_]', ''), '[^a-z0-9]', '_', 'g')
{%- endmacro %}

{% macro spark__billing_normalize_tag_key(column) -%}
    regexp_replace(regexp_replace(lower({{ column }}), '^user[:_]', ''), '[^a-z0-9]', '_')
{%- endmacro %}
