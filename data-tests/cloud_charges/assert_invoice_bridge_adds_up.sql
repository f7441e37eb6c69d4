-- SPEC §17: per provider, billing account, currency and invoice month, the bridge's steps add
-- up to its invoice_total exactly (decimal `=`), the invoice_total is the billed cost of the
-- bill's lines of that invoice month, and the placement and out_of_scope steps count every
-- one of those lines once. Returns the invoices that do not.
with

bridge as (
    select
        provider,
        coalesce(billing_account_id, '<none>') as billing_account_id,
        coalesce(currency, '<none>') as currency,
        invoice_month,
        sum(case when bridge_step = 'invoice_total' then amount else 0 end) as invoice_total,
        sum(case when bridge_step != 'invoice_total' then amount else 0 end) as steps_total,
        sum(case when bridge_step = 'invoice_total' then line_count else 0 end)
            as invoice_line_count,
        sum(
            case
                when bridge_step not in ('invoice_total', 'amortization_difference')
                    then line_count
                else 0
            end
        ) as placed_line_count
    from {{ ref('fct_invoice_bridge') }}
    group by
        provider,
        coalesce(billing_account_id, '<none>'),
        coalesce(currency, '<none>'),
        invoice_month
),

invoices as (
    select
        provider,
        coalesce(billing_account_id, '<none>') as billing_account_id,
        coalesce(currency, '<none>') as currency,
        cast(
            {{ dbt.date_trunc('month', 'coalesce(billing_period_start, charge_date)') }} as date
        ) as invoice_month,
        sum(billed_cost) as billed_cost,
        count(*) as line_count
    from {{ ref('fct_billing_lines') }}
    group by
        provider,
        coalesce(billing_account_id, '<none>'),
        coalesce(currency, '<none>'),
        cast(
            {{ dbt.date_trunc('month', 'coalesce(billing_period_start, charge_date)') }} as date
        )
)

select
    coalesce(invoices.provider, bridge.provider) as provider,  -- noqa: RF04
    coalesce(invoices.billing_account_id, bridge.billing_account_id) as billing_account_id,
    coalesce(invoices.invoice_month, bridge.invoice_month) as invoice_month,
    invoices.billed_cost,
    bridge.invoice_total,
    bridge.steps_total,
    invoices.line_count,
    bridge.placed_line_count
from invoices
full outer join bridge
    on
        invoices.provider = bridge.provider
        and invoices.billing_account_id = bridge.billing_account_id
        and invoices.currency = bridge.currency
        and invoices.invoice_month = bridge.invoice_month
where
    invoices.provider is null
    or bridge.provider is null
    or invoices.billed_cost != bridge.invoice_total
    or bridge.steps_total != bridge.invoice_total
    or invoices.line_count != bridge.invoice_line_count
    or bridge.placed_line_count != bridge.invoice_line_count
