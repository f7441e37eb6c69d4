{#- instance | volume | load_balancer | other, from a lower-cased resource ID of any cloud:
    AWS `i-…`, `vol-…`, an Elastic Load Balancing ARN; Azure resource paths (a scale set or a VM,
    a managed disk, a load balancer); Google Cloud resource paths (instances, disks, forwarding
    rules and target pools). -#}
{% macro billing_resource_type_from_id(resource_key) -%}
    case
        when {{ resource_key }} like 'i-%' then 'instance'
        when {{ resource_key }} like '%/virtualmachinescalesets/%' then 'instance'
        when {{ resource_key }} like '%/microsoft.compute/virtualmachines/%' then 'instance'
        when {{ resource_key }} like '%/instances/%' then 'instance'
        when {{ resource_key }} like 'vol-%' then 'volume'
        when {{ resource_key }} like '%/microsoft.compute/disks/%' then 'volume'
        when {{ resource_key }} like '%/disks/%' then 'volume'
        when {{ resource_key }} like 'arn:aws:elasticloadbalancing:%' then 'load_balancer'
        when {{ resource_key }} like '%/microsoft.network/loadbalancers/%' then 'load_balancer'
        when {{ resource_key }} like '%/forwardingrules/%' then 'load_balancer'
        when {{ resource_key }} like '%/targetpools/%' then 'load_balancer'
        else 'other'
    end
{%- endmacro %}
