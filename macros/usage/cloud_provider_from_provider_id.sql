{#- The cloud of a Kubernetes node's provider ID: `aws:///…` → `aws`, `gce://…` → `gcp`,
    `azure:///…` → `azure`; anything else (on-prem, kind, vSphere, …) → `other`;
    null → null. -#}
{% macro cloud_provider_from_provider_id(provider_id) -%}
    case
        when {{ provider_id }} is null then null
        when lower({{ provider_id }}) like 'aws://%' then 'aws'
        when lower({{ provider_id }}) like 'gce://%' then 'gcp'
        when lower({{ provider_id }}) like 'azure://%' then 'azure'
        else 'other'
    end
{%- endmacro %}
