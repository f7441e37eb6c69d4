-- One row per billing line of every bill, in exactly one place (SPEC §10): an allocation, the
-- Kubernetes chargeback, not_charged (with the reason), unattributed, or ignored_zero. Two
-- amounts per line: effective_cost (net amortized; over all lines it sums to the bill) and
-- allocation_cost, what the allocation is charged: savings-plan-covered usage at its on-demand
-- cost (list_cost), every other attributed line at its effective_cost; on unattributed lines
-- what an allocation would be charged; 0 on every other placement.
with

classified as (
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
        list_cost,
        billed_cost,
        effective_cost,
        is_savings_plan_covered_usage,
        cluster_id,
        line_class,
        not_charged_reason,
        cluster_allocation_name
    from {{ ref('int_cloud_charges_classified') }}
),

attributed as (
    select
        billing_line_id,
        attribution_rule,
        allocation_name,
        reservation_id,
        resource_group_id,
        deployment_id,
        default_account_id,
        unattributed_reason,
        attributed_at
    from {{ ref('int_cloud_charges_attributed') }}
),

placed as (
    select
        classified.*,
        case
            when classified.line_class = 'kubernetes_cluster' then 'allocation'
            when classified.line_class != 'rules' then classified.line_class
            when attributed.attribution_rule = 'unattributed' then 'unattributed'
            when attributed.allocation_name is not null then 'allocation'
            -- Not attributed yet (int_cloud_charges_attributed not rebuilt): shown as such.
            else 'unattributed'
        end as placement,
        case
            when classified.line_class = 'kubernetes_cluster' then 'kubernetes_cluster'
            when classified.line_class = 'rules'
                then coalesce(attributed.attribution_rule, 'not_attributed_yet')
        end as attribution_rule,
        case
            when classified.line_class = 'kubernetes_cluster'
                then classified.cluster_allocation_name
            when classified.line_class = 'rules' then attributed.allocation_name
        end as allocation_name,
        attributed.reservation_id,
        attributed.resource_group_id,
        attributed.deployment_id,
        attributed.default_account_id,
        case
            when classified.line_class = 'rules'
                then coalesce(attributed.unattributed_reason, 'not_attributed_yet')
        end as unattributed_reason,
        attributed.attributed_at
    from classified
    left join attributed on classified.billing_line_id = attributed.billing_line_id
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
        case when placement = 'not_charged' then not_charged_reason end as not_charged_reason,
        case when placement = 'unattributed' then unattributed_reason end as unattributed_reason,
        cluster_id,
        reservation_id,
        resource_group_id,
        deployment_id,
        default_account_id,
        list_cost,
        billed_cost,
        effective_cost,
        cast(
            case
                when placement not in ('allocation', 'unattributed') then 0
                when is_savings_plan_covered_usage then list_cost
                else effective_cost
            end as decimal(38, 10)
        ) as allocation_cost,
        attributed_at
    from placed
)

select * from final
