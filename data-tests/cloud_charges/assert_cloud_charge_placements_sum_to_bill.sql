-- SPEC §10: every line lands in exactly one place, so per provider, billing account and
-- charge month the placements (allocation + kubernetes_chargeback + not_charged +
-- unattributed + ignored_zero) add up to the bill's effective_cost exactly (decimal `=`), over
-- the same number of lines. Returns the account-months that do not.
with

placed as (
    select
        provider,
        coalesce(billing_account_id, '<none>') as billing_account_id,
        charge_month,
        count(*) as line_count,
        sum(case when placement = 'allocation' then effective_cost else 0 end) as allocation_cost,
        sum(case when placement = 'kubernetes_chargeback' then effective_cost else 0 end)
            as kubernetes_chargeback_cost,
        sum(case when placement = 'not_charged' then effective_cost else 0 end)
            as not_charged_cost,
        sum(case when placement = 'unattributed' then effective_cost else 0 end)
            as unattributed_cost,
        sum(case when placement = 'ignored_zero' then effective_cost else 0 end)
            as ignored_zero_cost
    from {{ ref('fct_cloud_charge_allocations') }}
    group by provider, coalesce(billing_account_id, '<none>'), charge_month
),

billed as (
    select
        provider,
        coalesce(billing_account_id, '<none>') as billing_account_id,
        cast({{ dbt.date_trunc('month', 'charge_date') }} as date) as charge_month,
        count(*) as line_count,
        sum(effective_cost) as effective_cost
    from {{ ref('fct_billing_lines') }}
    group by
        provider,
        coalesce(billing_account_id, '<none>'),
        cast({{ dbt.date_trunc('month', 'charge_date') }} as date)
),

compared as (
    select
        coalesce(billed.provider, placed.provider) as provider,  -- noqa: RF04
        coalesce(billed.billing_account_id, placed.billing_account_id) as billing_account_id,
        coalesce(billed.charge_month, placed.charge_month) as charge_month,
        billed.line_count as bill_line_count,
        placed.line_count as placed_line_count,
        billed.effective_cost as bill_effective_cost,
        placed.allocation_cost
        + placed.kubernetes_chargeback_cost
        + placed.not_charged_cost
        + placed.unattributed_cost
        + placed.ignored_zero_cost as placed_effective_cost
    from billed
    full outer join placed
        on
            billed.provider = placed.provider
            and billed.billing_account_id = placed.billing_account_id
            and billed.charge_month = placed.charge_month
)

select *
from compared
where
    bill_line_count is null
    or placed_line_count is null
    or bill_line_count != placed_line_count
    or bill_effective_cost != placed_effective_cost
