-- One row per cluster and UTC day with usage or in-scope billing: whether the bill covers the
-- day (SPEC §4, "billed through" per account and day). The day is billed when every account the
-- cluster's in-scope lines come from reaches past it, leaving out an account whose export
-- stopped before the day; with no such account at all it is not billed.
with

node_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
),

scoped_lines as (
    select distinct
        cluster_id,
        charge_date,
        provider,
        billing_account_id
    from {{ ref('int_billing_lines_scoped') }}
),

accounts as (
    select
        provider,
        billing_account_id,
        billed_through_date,
        is_export_stopped
    from {{ ref('int_billing_accounts_billed_through') }}
),

cluster_days as (
    select
        cluster_id,
        usage_date
    from node_days
    union
    select
        cluster_id,
        charge_date as usage_date
    from scoped_lines
),

cluster_accounts as (
    select distinct
        scoped_lines.cluster_id,
        accounts.provider,
        accounts.billing_account_id,
        accounts.billed_through_date,
        accounts.is_export_stopped
    from scoped_lines
    inner join accounts
        on
            scoped_lines.provider = accounts.provider
            and scoped_lines.billing_account_id = accounts.billing_account_id
),

day_accounts as (
    select
        cluster_days.cluster_id,
        cluster_days.usage_date,
        cluster_accounts.billing_account_id,
        cluster_accounts.billed_through_date
    from cluster_days
    inner join cluster_accounts
        on
            cluster_days.cluster_id = cluster_accounts.cluster_id
            and not (
                cluster_accounts.is_export_stopped
                and cluster_days.usage_date > cluster_accounts.billed_through_date
            )
),

day_status as (
    select
        cluster_id,
        usage_date,
        min(billed_through_date) as billed_through_date,
        count(*) as billing_accounts
    from day_accounts
    group by cluster_id, usage_date
),

final as (
    select
        cluster_days.cluster_id,
        cluster_days.usage_date,
        day_status.billed_through_date,
        cast(coalesce(day_status.billing_accounts, 0) as {{ dbt.type_bigint() }})
            as billing_accounts,
        coalesce(cluster_days.usage_date <= day_status.billed_through_date, false) as is_billed
    from cluster_days
    left join day_status
        on
            cluster_days.cluster_id = day_status.cluster_id
            and cluster_days.usage_date = day_status.usage_date
)

select * from final
