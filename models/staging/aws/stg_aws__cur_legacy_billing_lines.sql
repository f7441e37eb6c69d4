{#- One row per line item of an AWS legacy Cost and Usage Report file, in the billing-line shape. -#}
{%- set raw_columns = billing_raw_columns('aws', 'cur_legacy') -%}
{%- macro col(name) -%}{{ billing_raw_column(raw_columns, name) }}{%- endmacro -%}

with

source as (
    select * from {{ source('aws', 'cur_legacy') }}
),

renamed as (
    select
        'aws_cur_legacy' as source_format,
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        {{ col('bill/PayerAccountId') }} as billing_account_id,
        {{ col('lineItem/UsageAccountId') }} as sub_account_id,
        cast({{ to_utc_timestamp(col('bill/BillingPeriodStartDate')) }} as date)
            as billing_period_start,
        {{ to_utc_timestamp(col('lineItem/UsageStartDate')) }} as charge_period_start,
        {{ to_utc_timestamp(col('lineItem/UsageEndDate')) }} as charge_period_end,
        {{ col('lineItem/LineItemType') }} as line_item_type,
        {{ col('lineItem/ProductCode') }} as product_code,
        {{ col('lineItem/UsageType') }} as usage_type,
        {{ col('lineItem/Operation') }} as operation,
        {{ col('lineItem/ResourceId') }} as resource_id,
        {{ billing_to_amount(col('lineItem/UsageAmount')) }} as usage_amount,
        {{ col('lineItem/CurrencyCode') }} as currency,
        {{ col('lineItem/LineItemDescription') }} as line_item_description,
        {{ col('product/productFamily') }} as product_family,
        {{ col('product/instanceType') }} as instance_type,
        coalesce(
            {{ col('product/regionCode') }},
            {{ col('product/region') }}
        ) as region,
        {{ col('pricing/unit') }} as pricing_unit,
        {{ billing_to_amount(col('lineItem/UnblendedCost')) }} as unblended_cost,
        {{ billing_to_amount(col('lineItem/NetUnblendedCost')) }} as net_unblended_cost,
        {{ billing_to_amount(col('pricing/publicOnDemandCost')) }} as public_on_demand_cost,
        {{ col('reservation/ReservationARN') }} as reservation_arn,
        {{ billing_to_amount(col('reservation/EffectiveCost')) }} as reservation_effective_cost,
        {{ billing_to_amount(col('reservation/NetEffectiveCost')) }}
            as reservation_net_effective_cost,
        {{ billing_to_amount(col('reservation/UnusedAmortizedUpfrontFeeForBillingPeriod')) }}
            as reservation_unused_amortized_upfront_fee,
        {{ billing_to_amount(
            col('reservation/NetUnusedAmortizedUpfrontFeeForBillingPeriod')
        ) }} as reservation_net_unused_amortized_upfront_fee,
        {{ billing_to_amount(col('reservation/UnusedRecurringFee')) }}
            as reservation_unused_recurring_fee,
        {{ billing_to_amount(col('reservation/NetUnusedRecurringFee')) }}
            as reservation_net_unused_recurring_fee,
        {{ col('savingsPlan/SavingsPlanARN') }} as savings_plan_arn,
        {{ billing_to_amount(col('savingsPlan/SavingsPlanEffectiveCost')) }}
            as savings_plan_effective_cost,
        {{ billing_to_amount(col('savingsPlan/NetSavingsPlanEffectiveCost')) }}
            as savings_plan_net_effective_cost,
        {{ billing_to_amount(col('savingsPlan/TotalCommitmentToDate')) }}
            as savings_plan_total_commitment,
        {{ billing_to_amount(col('savingsPlan/UsedCommitment')) }}
            as savings_plan_used_commitment,
        case
            when {{ billing_is_json_object(col('resourceTags')) }}
                then {{ col('resourceTags') }}
            else '{}'
        end as tags
    from source
),

classified as (
    {{ billing_aws_classify('renamed') }}
),

final as (
    {{ billing_aws_finalize('classified') }}
)

select * from final
