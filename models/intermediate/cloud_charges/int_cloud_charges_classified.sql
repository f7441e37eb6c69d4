-- One row per billing line of every bill: its costs, its months, and where it goes before any
-- attribution rule is read (SPEC §10):
--   ignored_zero           billed and net amortized cost both 0;
--   kubernetes_chargeback  a line of a cluster's scope (int_billing_lines_scoped), billed by the
--                          monthly chargeback (§9);
--   kubernetes_cluster     a scope line of a cluster that `attribute_cluster_to` gives wholly to
--                          one allocation;
--   not_charged            savings-plan fees and negations, credits, refunds and discounts,
--                          with the reason;
--   rules                  everything else: attributed by the ordered rules
--                          (int_cloud_charges_matched).
-- effective_cost is the line's net amortized cost with Google commitment fees spread onto the
-- lines they discounted, as the scope model counts it; per account and UTC day it sums to the
-- bill's effective_cost exactly (the spread sums to 0 there).
with

billing_lines as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        sub_account_id,
        billing_period_start,
        charge_period_start,
        charge_date,
        resource_id,
        resource_key,
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
        amortized_commitment_cost
    from {{ ref('int_billing_lines_unioned') }}
),

scoped_lines as (
    select
        billing_line_id,
        cluster_id
    from {{ ref('int_billing_lines_scoped') }}
),

cluster_allocations as (
    select
        cluster_id,
        allocation_name
    from {{ ref('stg_config_allocations__cluster_allocations') }}
),

costed as (
    select
        billing_lines.*,
        cast(
            coalesce(billing_lines.effective_cost, 0)
            + coalesce(billing_lines.amortized_commitment_cost, 0)
            as decimal(38, 10)
        ) as placed_cost,
        lower(coalesce(billing_lines.line_item_type, '')) as line_item_type_lower
    from billing_lines
),

classified as (
    select
        costed.*,
        scoped_lines.cluster_id,
        cluster_allocations.allocation_name as cluster_allocation_name,
        case
            when
                costed.pricing_category = 'savings_plan'
                and costed.charge_category = 'adjustment'
                then 'savings_plan_negation'
            when
                costed.pricing_category = 'savings_plan'
                and costed.charge_category = 'purchase'
                then 'savings_plan_fee'
            when costed.line_item_type_lower = 'refund' then 'refund'
            when
                costed.charge_category = 'credit'
                and costed.line_item_type_lower like '%discount%'
                then 'discount'
            when costed.charge_category = 'credit' then 'credit'
        end as not_charged_reason
    from costed
    left join scoped_lines on costed.billing_line_id = scoped_lines.billing_line_id
    left join cluster_allocations on scoped_lines.cluster_id = cluster_allocations.cluster_id
),

final as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        sub_account_id,
        charge_date,
        coalesce(
            charge_period_start, cast(charge_date as {{ dbt.type_timestamp() }})
        ) as charge_at,
        cast({{ dbt.date_trunc('month', 'charge_date') }} as date) as charge_month,
        -- The month whose invoice carries the line (Google's invoice month follows Pacific
        -- time, so a few lines of a month's first hours sit on the previous invoice).
        cast(
            {{ dbt.date_trunc('month', 'coalesce(billing_period_start, charge_date)') }} as date
        ) as invoice_month,
        resource_id,
        resource_key,
        resource_type,
        service_category,
        service_name,
        charge_category,
        pricing_category,
        line_item_type,
        currency,
        cast(coalesce(list_cost, billed_cost) as decimal(38, 10)) as list_cost,
        cast(billed_cost as decimal(38, 10)) as billed_cost,
        placed_cost as effective_cost,
        charge_category = 'usage' and pricing_category = 'savings_plan'
            as is_savings_plan_covered_usage,
        cluster_id,
        case
            when coalesce(billed_cost, 0) = 0 and placed_cost = 0 then 'ignored_zero'
            when cluster_id is not null and cluster_allocation_name is not null
                then 'kubernetes_cluster'
            when cluster_id is not null then 'kubernetes_chargeback'
            when not_charged_reason is not null then 'not_charged'
            else 'rules'
        end as line_class,
        case
            when
                not (coalesce(billed_cost, 0) = 0 and placed_cost = 0)
                and cluster_id is null
                then not_charged_reason
        end as not_charged_reason,
        cluster_allocation_name
    from classified
)

select * from final
