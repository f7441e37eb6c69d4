-- One row per billing line of every bill, in exactly one place (SPEC §10): its placement,
-- the rule and allocation that took it, its two amounts, and the user on the cost record.
-- A view: the attribution comes pinned from int_cloud_charges_placed, but the user is
-- resolved when the view is read, from the current configuration, so changing a default
-- billing username relabels history (reference 004): the `user`/`owner` tag, else the user of
-- the line's deployment, else the account's default billing username, else the
-- organization's.
{{ config(materialized='view') }}

with

placed as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        sub_account_id,
        charge_date,
        charge_at,
        charge_month,
        invoice_month,
        resource_id,
        resource_type,
        service_category,
        service_name,
        charge_category,
        pricing_category,
        line_item_type,
        currency,
        placement,
        attribution_rule,
        allocation_name,
        not_charged_reason,
        unattributed_reason,
        cluster_id,
        reservation_id,
        resource_group_id,
        deployment_id,
        default_account_id,
        list_cost,
        billed_cost,
        effective_cost,
        allocation_cost,
        attributed_at
    from {{ ref('int_cloud_charges_placed') }}
),

line_tags as (
    select
        billing_line_id,
        deployment_tag,
        session_tag,
        user_tag
    from {{ ref('int_cloud_charge_tags_pivoted') }}
),

deployments as (
    select
        deployment_id,
        user_name
    from {{ ref('stg_config_allocations__deployments') }}
),

accounts as (
    select
        account_id,
        default_user_name
    from {{ ref('stg_config_allocations__accounts') }}
    where default_user_name is not null
),

settings as (
    select default_user_name from {{ ref('stg_config_allocations__settings') }}
),

deployment_users as (
    select
        line_tags.billing_line_id,
        line_tags.user_tag,
        coalesce(by_deployment_tag.user_name, by_session_tag.user_name) as deployment_user_name
    from line_tags
    left join deployments as by_deployment_tag
        on line_tags.deployment_tag = by_deployment_tag.deployment_id
    left join deployments as by_session_tag
        on line_tags.session_tag = by_session_tag.deployment_id
),

labelled as (
    select
        placed.*,
        deployment_users.user_tag,
        deployment_users.deployment_user_name,
        coalesce(sub_account.default_user_name, billing_account.default_user_name)
            as account_user_name,
        settings.default_user_name as organization_user_name
    from placed
    left join settings on 1 = 1
    left join deployment_users on placed.billing_line_id = deployment_users.billing_line_id
    left join accounts as sub_account on placed.sub_account_id = sub_account.account_id
    left join accounts as billing_account on placed.billing_account_id = billing_account.account_id
),

final as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        sub_account_id,
        charge_date,
        charge_at,
        charge_month,
        invoice_month,
        resource_id,
        resource_type,
        service_category,
        service_name,
        charge_category,
        pricing_category,
        line_item_type,
        currency,
        placement,
        attribution_rule,
        allocation_name,
        not_charged_reason,
        unattributed_reason,
        cluster_id,
        reservation_id,
        resource_group_id,
        deployment_id,
        default_account_id,
        list_cost,
        billed_cost,
        effective_cost,
        allocation_cost,
        coalesce(user_tag, deployment_user_name, account_user_name, organization_user_name)
            as user_name,
        case
            when user_tag is not null then 'tag'
            when deployment_user_name is not null then 'deployment'
            when account_user_name is not null then 'account_default'
            when organization_user_name is not null then 'organization_default'
            else 'none'
        end as user_source,
        attributed_at
    from labelled
)

select * from final
