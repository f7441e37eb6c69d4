-- One row per billing account, invoice month and bridge step (SPEC §17): a walk from the
-- invoice's total to where every line of it went. Per account and month:
--   invoice_total = kubernetes_chargeback + allocation + not_charged + unattributed
--                   + ignored_zero + out_of_scope + amortization_difference
-- exactly, in decimal. The placements carry the lines' net amortized cost; out_of_scope is
-- the billed cost of lines on this invoice that belong to another month's ledger (charged in
-- another UTC month, e.g. Google's Pacific-time invoice month); amortization_difference is
-- billed - net amortized cost over the rest (upfront fees spread, savings-plan and
-- reservation effective cost, net-of-discount figures, Google commitment spread).
with

placed as (
    select
        provider,
        billing_account_id,
        currency,
        invoice_month,
        charge_month,
        placement,
        allocation_name,
        not_charged_reason,
        cluster_id,
        billed_cost,
        effective_cost,
        allocation_cost
    from {{ ref('int_cloud_charges_placed') }}
),

in_period as (
    select *
    from placed
    where charge_month = invoice_month
),

steps as (
    select
        provider,
        billing_account_id,
        currency,
        invoice_month,
        10 as step_order,
        'invoice_total' as bridge_step,
        cast(null as {{ dbt.type_string() }}) as step_detail,
        count(*) as line_count,
        sum(billed_cost) as amount,
        cast(null as decimal(38, 10)) as allocation_charged_cost
    from placed
    group by provider, billing_account_id, currency, invoice_month

    union all

    select
        provider,
        billing_account_id,
        currency,
        invoice_month,
        case placement
            when 'kubernetes_chargeback' then 20
            when 'allocation' then 30
            when 'not_charged' then 40
            when 'unattributed' then 50
            else 60
        end as step_order,
        placement as bridge_step,
        case placement
            when 'kubernetes_chargeback' then cluster_id
            when 'allocation' then allocation_name
            when 'not_charged' then not_charged_reason
        end as step_detail,
        count(*) as line_count,
        sum(effective_cost) as amount,
        case
            when placement = 'allocation' then sum(allocation_cost)
        end as allocation_charged_cost
    from in_period
    group by
        provider,
        billing_account_id,
        currency,
        invoice_month,
        placement,
        case placement
            when 'kubernetes_chargeback' then cluster_id
            when 'allocation' then allocation_name
            when 'not_charged' then not_charged_reason
        end

    union all

    select
        provider,
        billing_account_id,
        currency,
        invoice_month,
        70 as step_order,
        'out_of_scope' as bridge_step,
        'charged in ' || {{ year_month('charge_month') }} as step_detail,
        count(*) as line_count,
        sum(billed_cost) as amount,
        cast(null as decimal(38, 10)) as allocation_charged_cost
    from placed
    where charge_month != invoice_month
    group by provider, billing_account_id, currency, invoice_month, charge_month

    union all

    select
        provider,
        billing_account_id,
        currency,
        invoice_month,
        80 as step_order,
        'amortization_difference' as bridge_step,
        cast(null as {{ dbt.type_string() }}) as step_detail,
        -- These lines are counted in their placement too.
        sum(case when billed_cost != effective_cost then 1 else 0 end) as line_count,
        sum(billed_cost - effective_cost) as amount,
        cast(null as decimal(38, 10)) as allocation_charged_cost
    from in_period
    group by provider, billing_account_id, currency, invoice_month
),

final as (
    select
        provider,
        billing_account_id,
        currency,
        invoice_month,
        cast(step_order as integer) as step_order,
        bridge_step,
        step_detail,
        cast(line_count as bigint) as line_count,
        cast(amount as decimal(38, 10)) as amount,
        cast(allocation_charged_cost as decimal(38, 10)) as allocation_charged_cost
    from steps
)

select * from final
