-- One row per Kubernetes cluster whose whole bill goes to one allocation instead of the
-- Kubernetes chargeback (`cloud_charges.kubernetes.attribute_cluster_to`).
with

source as (
    select
        cluster_id,
        allocation_name
    from {{ source('config_allocations', 'cloud_charge_clusters') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(allocation_name as {{ dbt.type_string() }}) as allocation_name
    from source
)

select * from final
