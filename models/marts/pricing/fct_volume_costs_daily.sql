-- One row per cluster, persistent volume and UTC day it cost something.
with

volume_costs as (
    select
        cluster_id,
        usage_date,
        pv_name,
        pvc_name,
        namespace,
        storageclass,
        capacity_gib,
        resource_key,
        pricing_basis,
        is_unattributed,
        volume_cost
    from {{ ref('int_volume_costs_daily') }}
),

final as (
    select
        cluster_id,
        usage_date,
        pv_name,
        pvc_name,
        namespace,
        storageclass,
        cast(capacity_gib as double) as capacity_gib,
        resource_key as resource_id,
        pricing_basis,
        is_unattributed,
        cast(volume_cost as double) as volume_cost
    from volume_costs
)

select * from final
