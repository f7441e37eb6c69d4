-- One row per cluster, node and UTC day the node ran: hours run (Σ f_h over the day's hours),
-- capacity, role (that of the day's last hour) and the keys a bill is matched by (SPEC §4).
-- Cloud, instance key and scale set come from the node's provider ID in the nodes CSV (the
-- listing whose first/last-seen span covers the day). A node the CSV does not list falls back
-- to the operator's `resource_id` (the provider ID's last segment): the AWS instance ID or the
-- GCP instance name; for Azure only the VM index, so the scale set comes from the AKS node
-- name (`aks-<pool>-<id>-vmss<6 base-36 chars>`).
{{ config(**incremental_by_day('usage_date')) }}

with

node_hours as (
    select
        cluster_id,
        node,
        usage_date,
        interval_start,
        capacity_cpu_cores,
        capacity_memory_bytes,
        hour_fraction,
        node_role,
        node_role_source,
        resource_id
    from {{ ref('int_node_hours') }}
    where {{ day_range_filter('usage_date') }}
),

node_listings as (
    select
        cluster_id,
        node,
        provider_id,
        cloud_provider,
        instance_key,
        scale_set_id,
        scale_set_name,
        azure_vm_index,
        first_seen,
        last_seen
    from {{ ref('stg_cluster__nodes') }}
),

clusters as (
    select
        cluster_id,
        provider
    from {{ ref('stg_config__clusters') }}
),

node_days_summed as (
    select
        cluster_id,
        node,
        usage_date,
        {{ exact_sum('hour_fraction') }} as hours_run,
        count(*) as hours_reported,
        max(capacity_cpu_cores) as capacity_cpu_cores,
        max(capacity_memory_bytes) as capacity_memory_bytes
    from node_hours
    group by cluster_id, node, usage_date
),

last_hours_ranked as (
    select
        cluster_id,
        node,
        usage_date,
        node_role,
        node_role_source,
        resource_id,
        row_number() over (
            partition by cluster_id, node, usage_date
            order by interval_start desc
        ) as hour_rank
    from node_hours
),

node_days as (
    select
        node_days_summed.*,
        last_hours_ranked.node_role,
        last_hours_ranked.node_role_source,
        last_hours_ranked.resource_id
    from node_days_summed
    inner join last_hours_ranked
        on
            node_days_summed.cluster_id = last_hours_ranked.cluster_id
            and node_days_summed.node = last_hours_ranked.node
            and node_days_summed.usage_date = last_hours_ranked.usage_date
            and last_hours_ranked.hour_rank = 1
),

-- A node name the CSV lists with several provider IDs (a name reused by a new instance) takes
-- the listing whose span covers the day, the most recently first seen when several do.
listings_ranked as (
    select
        node_days.cluster_id,
        node_days.node,
        node_days.usage_date,
        node_listings.provider_id,
        node_listings.cloud_provider,
        node_listings.instance_key,
        node_listings.scale_set_id,
        node_listings.scale_set_name,
        node_listings.azure_vm_index,
        row_number() over (
            partition by node_days.cluster_id, node_days.node, node_days.usage_date
            order by node_listings.first_seen desc nulls last, node_listings.provider_id asc
        ) as listing_rank
    from node_days
    inner join node_listings
        on
            node_days.cluster_id = node_listings.cluster_id
            and node_days.node = node_listings.node
            and node_days.usage_date
            >= coalesce(cast(node_listings.first_seen as date), cast('1970-01-01' as date))
            and node_days.usage_date
            <= coalesce(cast(node_listings.last_seen as date), cast('9999-12-31' as date))
),

fallback_providers as (
    select
        node_days.cluster_id,
        node_days.node,
        node_days.usage_date,
        node_days.resource_id,
        case
            when clusters.provider in ('aws', 'gcp', 'azure') then clusters.provider
            when {{ regexp_matches('node_days.resource_id', "'^i-[0-9a-f]{8,17}$'") }} then 'aws'
            when {{ aks_scale_set_name_from_node('node_days.node') }} is not null then 'azure'
            when node_days.node like 'gke-%' then 'gcp'
            else 'other'
        end as cloud_provider,
        {{ aks_scale_set_name_from_node('node_days.node') }} as aks_scale_set_name,
        coalesce(
            {{ aks_vm_index_from_node('node_days.node') }},
            case
                when {{ regexp_matches('node_days.resource_id', "'^[0-9]+$'") }}
                    then cast(node_days.resource_id as {{ dbt.type_bigint() }})
            end
        ) as aks_vm_index
    from node_days
    left join clusters
        on node_days.cluster_id = clusters.cluster_id
),

-- The keys of a node the CSV does not list: the resource ID is the instance ID (AWS) or name
-- (GCP, other); on Azure it is only the VM index, so the scale set comes from the AKS name.
fallback_keys as (
    select
        cluster_id,
        node,
        usage_date,
        cloud_provider,
        case
            when cloud_provider = 'azure' and aks_scale_set_name is not null
                then aks_scale_set_name || '_' || cast(aks_vm_index as {{ dbt.type_string() }})
            when cloud_provider = 'azure' then lower(resource_id)
            else resource_id
        end as instance_key,
        case when cloud_provider = 'azure' then aks_scale_set_name end as scale_set_name,
        case when cloud_provider = 'azure' then aks_vm_index end as azure_vm_index
    from fallback_providers
),

final as (
    select
        node_days.cluster_id,
        node_days.node,
        node_days.usage_date,
        node_days.hours_run,
        node_days.hours_reported,
        node_days.capacity_cpu_cores,
        node_days.capacity_memory_bytes,
        node_days.node_role,
        node_days.node_role_source,
        node_days.resource_id,
        listings_ranked.provider_id,
        case
            when listings_ranked.provider_id is not null then listings_ranked.cloud_provider
            else fallback_keys.cloud_provider
        end as cloud_provider,
        case
            when listings_ranked.provider_id is not null then listings_ranked.instance_key
            else fallback_keys.instance_key
        end as instance_key,
        listings_ranked.scale_set_id,
        case
            when listings_ranked.provider_id is not null then listings_ranked.scale_set_name
            else fallback_keys.scale_set_name
        end as scale_set_name,
        case
            when listings_ranked.provider_id is not null then listings_ranked.azure_vm_index
            else fallback_keys.azure_vm_index
        end as azure_vm_index,
        listings_ranked.provider_id is null as is_provider_id_fallback
    from node_days
    left join listings_ranked
        on
            node_days.cluster_id = listings_ranked.cluster_id
            and node_days.node = listings_ranked.node
            and node_days.usage_date = listings_ranked.usage_date
            and listings_ranked.listing_rank = 1
    inner join fallback_keys
        on
            node_days.cluster_id = fallback_keys.cluster_id
            and node_days.node = fallback_keys.node
            and node_days.usage_date = fallback_keys.usage_date
)

select * from final
