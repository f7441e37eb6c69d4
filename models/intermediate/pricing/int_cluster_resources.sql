-- Every Kubernetes object of a cluster that a billing line can be matched to: nodes (by
-- instance, or by scale set on Azure), persistent volumes and LoadBalancer services.
with

node_days as (
    select
        cluster_id,
        node,
        cloud_provider,
        instance_key,
        scale_set_name
    from {{ ref('int_node_days') }}
),

volumes as (
    select
        cluster_id,
        pv_name,
        csi_volume_handle
    from {{ ref('stg_koku__storage_usage') }}
),

load_balancers as (
    select
        cluster_id,
        namespace,
        service,
        load_balancer_id
    from {{ ref('stg_cluster__lb_services') }}
),

node_keys as (
    select distinct
        cluster_id,
        'instance' as resource_type,
        case
            when cloud_provider = 'azure' then lower(scale_set_name)
            else lower(instance_key)
        end as match_key,
        cloud_provider = 'azure' as is_scale_set
    from node_days
    where coalesce(instance_key, scale_set_name) is not null
),

-- A disk is matched by its CSI volume handle, or else by the PersistentVolume's name.
volume_keys as (
    select distinct
        cluster_id,
        'volume' as resource_type,
        lower(csi_volume_handle) as match_key,
        false as is_scale_set
    from volumes
    where csi_volume_handle is not null
    union
    select distinct
        cluster_id,
        'volume' as resource_type,
        lower(pv_name) as match_key,
        false as is_scale_set
    from volumes
    where pv_name is not null
),

load_balancer_keys as (
    select distinct
        cluster_id,
        'load_balancer' as resource_type,
        lower(load_balancer_id) as match_key,
        false as is_scale_set
    from load_balancers
    where load_balancer_id is not null
),

final as (
    select * from node_keys
    union all
    select * from volume_keys
    union all
    select * from load_balancer_keys
)

select * from final
