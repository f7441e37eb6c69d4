-- One row per billing account (provider and account ID): how far its export reaches (SPEC §4).
-- An account-day counts as billed once the account's latest usage charge period end passes the
-- end of that day. Rows that span more than a day (tax, support fees, monthly charges, whose
-- period is the whole month) say nothing about how far the export got, so they do not count.
-- An export more than the repair window behind the most advanced export of its provider has
-- stopped (an account closed or moved), not lagged: it no longer holds later days back.
with

billing_lines as (
    select
        provider,
        billing_account_id,
        charge_category,
        charge_period_start,
        charge_period_end
    from {{ ref('int_billing_lines_unioned') }}
),

settings as (
    select repair_window_days from {{ ref('stg_config__settings') }}
),

accounts as (
    select
        provider,
        billing_account_id,
        max(charge_period_end) as latest_charge_period_end
    from billing_lines
    where
        charge_category = 'usage'
        and charge_period_end is not null
        and charge_period_end <= {{ dbt.dateadd('day', 1, 'charge_period_start') }}
    group by provider, billing_account_id
),

billed_through as (
    select
        provider,
        billing_account_id,
        latest_charge_period_end,
        -- the last whole UTC day the export covers
        cast({{ dbt.dateadd('day', -1, 'latest_charge_period_end') }} as date)
            as billed_through_date
    from accounts
),

final as (
    select
        billed_through.provider,  -- noqa: RF04
        billed_through.billing_account_id,
        billed_through.latest_charge_period_end,
        billed_through.billed_through_date,
        billed_through.billed_through_date < {{ dbt.dateadd(
            'day',
            '-settings.repair_window_days',
            'max(billed_through.billed_through_date) over (partition by billed_through.provider)'
        ) }} as is_export_stopped
    from billed_through
    cross join settings
)

select * from final
