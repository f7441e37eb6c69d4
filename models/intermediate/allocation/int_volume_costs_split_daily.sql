-- One row per cluster, day, volume and receiver of its cost (SPEC §4): a volume-day's cost
-- goes to its claim's namespace, split among the pods that mounted it by the hours each did;
-- when no pod mounted it that day, to the namespace as a whole (pod is null). A PV no claim
-- used that day keeps its namespace null and is unattributed storage (§7).
with

volume_costs as (
    select
        cluster_id,
        usage_date,
        pv_name,
        pvc_name,
        namespace,
        pricing_basis,
        volume_cost,
        is_unattributed
    from {{ ref('int_volume_costs_daily') }}
),

mounts as (
    select
        cluster_id,
        usage_date,
        pv_name,
        pod,
        count(distinct interval_start) as hours_mounted
    from {{ ref('stg_koku__storage_usage') }}
    where pod is not null and pod != ''
    group by cluster_id, usage_date, pv_name, pod
),

mount_totals as (
    select
        cluster_id,
        usage_date,
        pv_name,
        sum(hours_mounted) as total_hours_mounted
    from mounts
    group by cluster_id, usage_date, pv_name
),

final as (
    select
        volume_costs.cluster_id,
        volume_costs.usage_date,
        volume_costs.pv_name,
        volume_costs.pvc_name,
        volume_costs.namespace,
        mounts.pod,
        volume_costs.pricing_basis,
        volume_costs.is_unattributed,
        volume_costs.volume_cost
        * coalesce(
            cast(mounts.hours_mounted as double) / mount_totals.total_hours_mounted, 1
        ) as storage_cost
    from volume_costs
    left join mount_totals
        on
            volume_costs.cluster_id = mount_totals.cluster_id
            and volume_costs.usage_date = mount_totals.usage_date
            and volume_costs.pv_name = mount_totals.pv_name
    left join mounts
        on
            volume_costs.cluster_id = mounts.cluster_id
            and volume_costs.usage_date = mounts.usage_date
            and volume_costs.pv_name = mounts.pv_name
)

select * from final
