{{ config(materialized='view') }}

-- One row per bill month and backing: how the month's bill (sealed, else the draft of the
-- last build; fct_bill_close_status) is backed, in money and as a share of the bill. Each
-- slice (cluster and cost family) is backed by one of:
--   invoice              the invoice slice its billing link picks (basis `invoice`);
--   rate_card            a rate-card cluster (provider on_prem) billed at its ledger cost,
--                        priced from the rate card the operator set (no invoice exists);
--   estimate             a cloud cluster billed at the ledger estimate: no billing link, an
--                        empty or negative slice, a factor out of bounds (basis `estimate`);
--   invoice_and_estimate the invoice on its complete days plus the estimate on days not
--                        billed yet (basis `invoice_and_estimate`).
-- Reconciled to invoice (SPEC §8) counts rate-card clusters as reconciled; this view says
-- how much of the bill has an invoice behind it. The four rows of a month add up to the bill
-- to the cent; a backing with no slice has a row with 0.
with

slices as (
    select
        {{ year_month('bill_month') }} as bill_month,
        bill_month as month_start_date,
        bill_state,
        cluster_id,
        cost_family,
        currency,
        basis,
        billed_cost
    from {{ ref('fct_bill_close_status') }}
),

clusters as (
    select
        cluster_id,
        provider
    from {{ ref('stg_config__clusters') }}
),

backed as (
    select
        slices.bill_month,
        slices.month_start_date,
        slices.bill_state,
        slices.currency,
        slices.cluster_id,
        slices.cost_family,
        coalesce(slices.billed_cost, 0) as billed_cost,
        case
            when slices.basis = 'invoice' then 'invoice'
            when slices.basis = 'invoice_and_estimate' then 'invoice_and_estimate'
            when clusters.provider = 'on_prem' then 'rate_card'
            else 'estimate'
        end as backing
    from slices
    left join clusters
        on slices.cluster_id = clusters.cluster_id
),

months as (
    select
        bill_month,
        month_start_date,
        min(bill_state) as bill_state,
        min(currency) as currency,
        sum(billed_cost) as bill_total_cost
    from backed
    group by bill_month, month_start_date
),

backings as (
    select
        'invoice' as backing,
        1 as backing_order
    union all
    select
        'rate_card' as backing,
        2 as backing_order
    union all
    select
        'estimate' as backing,
        3 as backing_order
    union all
    select
        'invoice_and_estimate' as backing,
        4 as backing_order
),

per_backing as (
    select
        bill_month,
        backing,
        count(*) as slice_count,
        sum(billed_cost) as billed_cost,
        {{ dbt.listagg(
            dbt.concat(['cluster_id', "' '", 'cost_family']),
            "', '",
            "order by cluster_id, cost_family",
        ) }} as slices
    from backed
    group by bill_month, backing
),

final as (
    select
        {{ dbt.concat(['months.bill_month', "'|'", 'backings.backing']) }} as bill_backing_id,
        cast(months.month_start_date as date) as bill_month,
        months.bill_state,
        months.currency,
        backings.backing,
        backings.backing_order,
        cast(coalesce(per_backing.slice_count, 0) as bigint) as slice_count,
        cast(coalesce(per_backing.billed_cost, 0) as decimal(38, 3)) as billed_cost,
        cast(months.bill_total_cost as decimal(38, 3)) as bill_total_cost,
        case
            when months.bill_total_cost <> 0
                then round(
                    cast(coalesce(per_backing.billed_cost, 0) as double)
                    / cast(months.bill_total_cost as double)
                    * 100,
                    2
                )
        end as bill_share_pct,
        per_backing.slices
    from months
    cross join backings
    left join per_backing
        on
            months.bill_month = per_backing.bill_month
            and backings.backing = per_backing.backing
)

select * from final
