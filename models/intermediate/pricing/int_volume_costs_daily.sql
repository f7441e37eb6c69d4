-- One row per cluster, persistent volume and UTC day: the disk's cost that day (SPEC §4).
-- A billed disk matches a PersistentVolume by its CSI volume handle (or the PV's name); a
-- cluster with no cloud bill prices its volumes from the rate card per GiB-month the way it
-- prices nodes: the PV's own name price wins, else the first label price in list order whose
-- `key=value` the PV carries (`storageclass=<class>` matches its storage class), else a `*`
-- price; each selector's price is the one in effect that day. A PV the bill shows on a day no
-- claim used it is `is_unattributed` (the unattributed-storage pool, §7).
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
        capacity_bytes,
        pv_labels
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

-- a selector's place in the list is where it first appears
selector_positions as (
    select
        cluster_id,
        selector_type,
        selector,
        min(list_position) as selector_position
    from volume_prices
    group by cluster_id, selector_type, selector
),

-- `key=value` label selectors, the key compared sanitized (as for nodes), the value as written
label_selectors as (
    select distinct
        cluster_id,
        selector,
        {{ sanitize_label_key("split_part(selector, '=', 1)") }} as label_key,
        substr(selector, length(split_part(selector, '=', 1)) + 2) as label_value
    from volume_prices
    where
        selector_type = 'label'
        and selector like '%=%'
        and selector not like 'storageclass=%'
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
        count(distinct interval_start) as hours_claimed,
        max(pv_labels) as pv_labels
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

-- Rate card for volumes (clusters without a cloud bill).
rate_card_volumes as (
    select volume_days.*
    from volume_days
    inner join clusters on volume_days.cluster_id = clusters.cluster_id
    where clusters.provider = 'on_prem'
),

volume_label_pairs as (
    select
        cluster_id,
        usage_date,
        pv_name,
        {{ split_label_pairs('pv_labels') }} as label_pair
    from rate_card_volumes
    where pv_labels is not null
),

volume_labels as (
    select distinct
        cluster_id,
        usage_date,
        pv_name,
        {{ sanitize_label_key(label_pair_key('label_pair')) }} as label_key,
        {{ label_pair_value('label_pair') }} as label_value
    from volume_label_pairs
    where label_pair != ''
),

-- every price that could apply to a volume-day: its name (rank 0), a label or its storage
-- class (rank 1), `*` (rank 2)
candidates as (
    select
        rate_card_volumes.cluster_id,
        rate_card_volumes.usage_date,
        rate_card_volumes.pv_name,
        0 as selector_rank,
        volume_prices.selector_type,
        volume_prices.selector,
        volume_prices.price,
        volume_prices.effective_from,
        volume_prices.list_position
    from rate_card_volumes
    inner join volume_prices
        on
            rate_card_volumes.cluster_id = volume_prices.cluster_id
            and volume_prices.selector_type != 'label'
            and rate_card_volumes.pv_name = volume_prices.selector
            and rate_card_volumes.usage_date >= volume_prices.effective_from
    union all
    select
        volume_labels.cluster_id,
        volume_labels.usage_date,
        volume_labels.pv_name,
        1 as selector_rank,
        volume_prices.selector_type,
        volume_prices.selector,
        volume_prices.price,
        volume_prices.effective_from,
        volume_prices.list_position
    from volume_labels
    inner join label_selectors
        on
            volume_labels.cluster_id = label_selectors.cluster_id
            and volume_labels.label_key = label_selectors.label_key
            and volume_labels.label_value = label_selectors.label_value
    inner join volume_prices
        on
            label_selectors.cluster_id = volume_prices.cluster_id
            and label_selectors.selector = volume_prices.selector
            and volume_prices.selector_type = 'label'
            and volume_labels.usage_date >= volume_prices.effective_from
    union all
    select
        rate_card_volumes.cluster_id,
        rate_card_volumes.usage_date,
        rate_card_volumes.pv_name,
        case when volume_prices.selector = '*' then 2 else 1 end as selector_rank,
        volume_prices.selector_type,
        volume_prices.selector,
        volume_prices.price,
        volume_prices.effective_from,
        volume_prices.list_position
    from rate_card_volumes
    inner join volume_prices
        on
            rate_card_volumes.cluster_id = volume_prices.cluster_id
            and volume_prices.selector_type = 'label'
            and rate_card_volumes.usage_date >= volume_prices.effective_from
            and (
                volume_prices.selector = 'storageclass=' || rate_card_volumes.storageclass
                or volume_prices.selector = '*'
            )
),

in_effect as (
    select
        candidates.*,
        selector_positions.selector_position,
        row_number() over (
            partition by
                candidates.cluster_id, candidates.usage_date, candidates.pv_name,
                candidates.selector_type, candidates.selector
            order by candidates.effective_from desc, candidates.list_position desc
        ) as version_rank
    from candidates
    inner join selector_positions
        on
            candidates.cluster_id = selector_positions.cluster_id
            and candidates.selector_type = selector_positions.selector_type
            and candidates.selector = selector_positions.selector
),

chosen_prices as (
    select
        cluster_id,
        usage_date,
        pv_name,
        price,
        row_number() over (
            partition by cluster_id, usage_date, pv_name
            order by selector_rank, selector_position, selector
        ) as precedence
    from in_effect
    where version_rank = 1
),

rate_card_candidates as (
    select
        rate_card_volumes.*,
        chosen_prices.price
    from rate_card_volumes
    left join chosen_prices
        on
            rate_card_volumes.cluster_id = chosen_prices.cluster_id
            and rate_card_volumes.usage_date = chosen_prices.usage_date
            and rate_card_volumes.pv_name = chosen_prices.pv_name
            and chosen_prices.precedence = 1
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
),

final as (
    select * from billed_volume_days
    union all
    select * from rate_card_volume_days
)

select * from final
