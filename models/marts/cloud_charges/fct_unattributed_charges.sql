-- One row per unattributed billing line (SPEC §10 rule 6): stored and shown, counted toward no
-- allocation, with the reason no rule matched and the rule tags the line carries, so the gap
-- can be closed (map the resource group, set the account's default, ...).
with

unattributed_lines as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        sub_account_id,
        charge_date,
        charge_month,
        service_name,
        resource_id,
        resource_type,
        charge_category,
        line_item_type,
        currency,
        unattributed_reason,
        billed_cost,
        effective_cost,
        allocation_cost
    from {{ ref('int_cloud_charges_placed') }}
    where placement = 'unattributed'
),

line_tags as (
    select
        billing_line_id,
        resource_group_tag,
        deployment_tag,
        session_tag,
        project_tag
    from {{ ref('int_cloud_charge_tags_pivoted') }}
),

final as (
    select
        unattributed_lines.billing_line_id,
        unattributed_lines.provider,
        unattributed_lines.billing_account_id,
        unattributed_lines.sub_account_id,
        unattributed_lines.charge_date,
        unattributed_lines.charge_month,
        unattributed_lines.service_name,
        unattributed_lines.resource_id,
        unattributed_lines.resource_type,
        unattributed_lines.charge_category,
        unattributed_lines.line_item_type,
        unattributed_lines.currency,
        unattributed_lines.unattributed_reason,
        line_tags.resource_group_tag,
        line_tags.deployment_tag,
        line_tags.session_tag,
        line_tags.project_tag,
        unattributed_lines.billed_cost,
        unattributed_lines.effective_cost,
        unattributed_lines.allocation_cost
    from unattributed_lines
    left join line_tags on unattributed_lines.billing_line_id = line_tags.billing_line_id
)

select * from final
