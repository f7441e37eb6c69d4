-- One row per cluster, persistent volume and UTC day: the disk's cost that day (SPEC §4).
-- A billed disk matches a PersistentVolume by its CSI volume handle (or the PV's name); a
-- cluster with no cloud bill prices its volumes from the rate card per GiB-month. A PV the bill
-- shows on a day no claim used it is `is_unattributed` (the unattributed-storage pool, §7).
with

storage_usage as (
    select
        cluster_id,
        usage_date,
        interval_start,
        namespace,
        pod,
        pvc_name,
        pv_name,
        storageclass,
        csi_volume_handle,
        capacity_bytes
    from {{ ref('stg_koku__storage_usage') }}
),

clusters as (
    select
        cluster_id,
        provider
    from {{ ref('stg_config__clusters') }}
),

usage_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
),

-- A disk billed on a day its cluster reported no usage is unallocated `no_usage`
-- (int_unallocated_costs_daily), not a volume cost.
volume_lines as (
    select
        scoped_lines.cluster_id,
        scoped_lines.charge_date,
        scoped_lines.match_key,
        scoped_lines.resource_key,
        scoped_lines.effective_cost
    from {{ ref('int_billing_lines_scoped') }} as scoped_lines
    inner join usage_days
        on
            scoped_lines.cluster_id = usage_days.cluster_id
            and scoped_lines.charge_date = usage_days.usage_date
    where scoped_lines.scope_status = 'matched' and scoped_lines.resource_type = 'volume'
),

volume_prices as (
    select
        cluster_id,
        selector_type,
        selector,
        price,
        effective_from,
        list_position
    from {{ ref('stg_rate_card__prices') }}
    where resource = 'volume' and unit = 'gib_month'
),

-- What the cluster knew about each volume that day (its claim, namespace and size).
volume_days as (
    select
        cluster_id,
        usage_date,
        pv_name,
        max(pvc_name) as pvc_name,
        max(namespace) as namespace,
        max(storageclass) as storageclass,
        max(csi_volume_handle) as csi_volume_handle,
        max(capacity_bytes) / 1073741824.0 as capacity_gib,
        count(distinct interval_start) as hours_claimed
    from storage_usage
    where pv_name is not null
    group by cluster_id, usage_date, pv_name
),

-- Every volume the cluster ever reported, for bill days when no claim used it.
volume_identity as (
    select
        cluster_id,
        pv_name,
        max(csi_volume_handle) as csi_volume_handle
    from storage_usage
    where pv_name is not null
    group by cluster_id, pv_name
),

billed as (
    select
        volume_lines.cluster_id,
        volume_lines.charge_date as usage_date,
        volume_identity.pv_name,
        max(volume_lines.resource_key) as resource_key,
        cast(sum(volume_lines.effective_cost) as double) as volume_cost
    from volume_lines
    inner join volume_identity
        on
            volume_lines.cluster_id = volume_identity.cluster_id
            and volume_lines.match_key in (
                lower(volume_identity.csi_volume_handle), lower(volume_identity.pv_name)
            )
    group by volume_lines.cluster_id, volume_lines.charge_date, volume_identity.pv_name
),

billed_volume_days as (
    select
        billed.cluster_id,
        billed.usage_date,
        billed.pv_name,
        volume_days.pvc_name,
        volume_days.namespace,
        volume_days.storageclass,
        volume_days.capacity_gib,
        billed.resource_key,
        'bill' as pricing_basis,
        billed.volume_cost,
        volume_days.pv_name is null as is_unattributed
    from billed
    left join volume_days
        on
            billed.cluster_id = volume_days.cluster_id
            and billed.usage_date = volume_days.usage_date
            and billed.pv_name = volume_days.pv_name
),

-- Rate card for volumes: a selector is the PV's name, `storageclass=<name>`, or `*`;
-- the price in effect that day, most specific selector first, then list order.
rate_card_candidates as (
    select
        volume_days.*,
        volume_prices.price,
        row_number() over (
            partition by volume_days.cluster_id, volume_days.usage_date, volume_days.pv_name
            order by
                case
                    when volume_prices.selector = volume_days.pv_name then 0
                    when volume_prices.selector != '*' then 1
                    else 2
                end,
                volume_prices.effective_from desc,
                volume_prices.list_position asc
        ) as precedence
    from volume_days
    inner join clusters on volume_days.cluster_id = clusters.cluster_id
    left join volume_prices
        on
            volume_days.cluster_id = volume_prices.cluster_id
            and volume_days.usage_date >= volume_prices.effective_from
            and (
                volume_days.pv_name = volume_prices.selector
                or volume_prices.selector = 'storageclass=' || volume_days.storageclass
                or volume_prices.selector = '*'
            )
    where clusters.provider = 'on_prem'
),

rate_card_volume_days as (
    select
        cluster_id,
        usage_date,
        pv_name,
        pvc_name,
        namespace,
        storageclass,
        capacity_gib,
        cast(null as {{ dbt.type_string() }}) as resource_key,
        case when price is null then 'unpriced' else 'rate_card' end as pricing_basis,
        -- a GiB-month price, for the hours of the day the volume was claimed
        coalesce(
            price * capacity_gib * hours_claimed
            / (24.0 * {{ days_in_month('usage_date') }}),
            0
        ) as volume_cost,
        false as is_unattributed
    from rate_card_candidates
    where precedence = 1
),

final as (
    select * from billed_volume_days
    union all
    select * from rate_card_volume_days
)

select * from final
