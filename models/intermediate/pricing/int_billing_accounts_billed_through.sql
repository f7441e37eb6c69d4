-- How far each cluster's bill goes: an account-day counts as billed once the export's latest
-- charge period end passes the end of that day (SPEC §4). A cluster is billed through the
-- earliest such day over the accounts its in-scope lines come from.
with

billing_lines as (
    select
        provider,
        billing_account_id,
        charge_period_end
    from {{ ref('int_billing_lines_unioned') }}
),

scoped as (
    select distinct
        cluster_id,
        provider,
        billing_account_id
    from {{ ref('int_billing_lines_scoped') }}
),

accounts as (
    select
        provider,
        billing_account_id,
        max(charge_period_end) as latest_charge_period_end
    from billing_lines
    group by provider, billing_account_id
),

final as (
    select
        scoped.cluster_id,
        min(accounts.latest_charge_period_end) as latest_charge_period_end,
        -- the last whole UTC day the export covers
        cast(
            {{ dbt.dateadd('day', -1, 'min(accounts.latest_charge_period_end)') }} as date
        ) as billed_through_date
    from scoped
    inner join accounts
        on
            scoped.provider = accounts.provider
            and scoped.billing_account_id = accounts.billing_account_id
    group by scoped.cluster_id
)

select * from final
