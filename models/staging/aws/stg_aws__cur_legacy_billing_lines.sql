{#- One row per line item of an AWS legacy Cost and Usage Report file, in the billing-line
    shape. The same rules as stg_aws__cur2_billing_lines over the legacy column names. -#}

with

source as (
    select
        _source_file,
        _row_number,
        _loaded_at,
        {{- billing_raw_select_list('aws', 'cur_legacy', [
            ('bill/PayerAccountId', 'billing_account_id'),
            ('lineItem/UsageAccountId', 'sub_account_id'),
            ('bill/BillingPeriodStartDate', 'billing_period_start'),
            ('lineItem/UsageStartDate', 'charge_period_start'),
            ('lineItem/UsageEndDate', 'charge_period_end'),
            ('lineItem/LineItemType', 'line_item_type'),
            ('lineItem/ProductCode', 'product_code'),
            ('lineItem/UsageType', 'usage_type'),
            ('lineItem/Operation', 'operation'),
            ('lineItem/ResourceId', 'resource_id'),
            ('lineItem/UsageAmount', 'usage_amount'),
            ('lineItem/CurrencyCode', 'currency'),
            ('lineItem/LineItemDescription', 'line_item_description'),
            ('product/productFamily', 'product_family'),
            ('product/instanceType', 'instance_type'),
            ('product/regionCode', 'region_code'),
            ('product/region', 'region'),
            ('pricing/unit', 'pricing_unit'),
            ('lineItem/UnblendedCost', 'unblended_cost'),
            ('lineItem/NetUnblendedCost', 'net_unblended_cost'),
            ('pricing/publicOnDemandCost', 'public_on_demand_cost'),
            ('reservation/ReservationARN', 'reservation_arn'),
            ('reservation/EffectiveCost', 'reservation_effective_cost'),
            ('reservation/NetEffectiveCost', 'reservation_net_effective_cost'),
            (
                'reservation/UnusedAmortizedUpfrontFeeForBillingPeriod',
                'reservation_unused_amortized_upfront_fee',
            ),
            (
                'reservation/NetUnusedAmortizedUpfrontFeeForBillingPeriod',
                'reservation_net_unused_amortized_upfront_fee',
            ),
            ('reservation/UnusedRecurringFee', 'reservation_unused_recurring_fee'),
            ('reservation/NetUnusedRecurringFee', 'reservation_net_unused_recurring_fee'),
            ('savingsPlan/SavingsPlanARN', 'savings_plan_arn'),
            ('savingsPlan/SavingsPlanEffectiveCost', 'savings_plan_effective_cost'),
            ('savingsPlan/NetSavingsPlanEffectiveCost', 'savings_plan_net_effective_cost'),
            ('savingsPlan/TotalCommitmentToDate', 'savings_plan_total_commitment'),
            ('savingsPlan/UsedCommitment', 'savings_plan_used_commitment'),
            ('resourceTags', 'tags'),
        ]) }}
    from {{ source('aws', 'cur_legacy') }}
    -- rows a restatement superseded are kept only for the seals that reference them
    where _superseded_at is null
),

typed as (
    {{ billing_aws_typed('source', 'aws_cur_legacy') }}
),

classified as (
    {{ billing_aws_classify('typed') }}
),

final as (
    {{ billing_aws_finalize('classified') }}
)

select * from final
