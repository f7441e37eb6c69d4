{#- One row per line item of an AWS CUR 2.0 (Data Exports) file, in the billing-line shape. -#}
{%- set raw_columns = billing_raw_columns('aws', 'cur2') -%}
{%- macro col(name) -%}{{ billing_raw_column(raw_columns, name) }}{%- endmacro -%}

with

source as (
    select * from {{ source('aws', 'cur2') }}
),

renamed as (
    select
        'aws_cur2' as source_format,
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        {{ col('bill_payer_account_id') }} as billing_account_id,
        {{ col('line_item_usage_account_id') }} as sub_account_id,
        cast({{ to_utc_timestamp(col('bill_billing_period_start_date')) }} as date)
            as billing_period_start,
        {{ to_utc_timestamp(col('line_item_usage_start_date')) }} as charge_period_start,
        {{ to_utc_timestamp(col('line_item_usage_end_date')) }} as charge_period_end,
        {{ col('line_item_line_item_type') }} as line_item_type,
        {{ col('line_item_product_code') }} as product_code,
        {{ col('line_item_usage_type') }} as usage_type,
        {{ col('line_item_operation') }} as operation,
        {{ col('line_item_resource_id') }} as resource_id,
        {{ billing_to_amount(col('line_item_usage_amount')) }} as usage_amount,
        {{ col('line_item_currency_code') }} as currency,
        {{ col('line_item_line_item_description') }} as line_item_description,
        {{ col('product_product_family') }} as product_family,
        {{ col('product_instance_type') }} as instance_type,
        coalesce(
            {{ col('product_region_code') }},
            {{ col('product_region') }}
        ) as region,
        {{ col('pricing_unit') }} as pricing_unit,
        {{ billing_to_amount(col('line_item_unblended_cost')) }} as unblended_cost,
        {{ billing_to_amount(col('line_item_net_unblended_cost')) }} as net_unblended_cost,
        {{ billing_to_amount(col('pricing_public_on_demand_cost')) }} as public_on_demand_cost,
        {{ col('reservation_reservation_a_r_n') }} as reservation_arn,
        {{ billing_to_amount(col('reservation_effective_cost')) }} as reservation_effective_cost,
        {{ billing_to_amount(col('reservation_net_effective_cost')) }}
            as reservation_net_effective_cost,
        {{ billing_to_amount(col('reservation_unused_amortized_upfront_fee_for_billing_period')) }}
            as reservation_unused_amortized_upfront_fee,
        {{ billing_to_amount(
            col('reservation_net_unused_amortized_upfront_fee_for_billing_period')
        ) }} as reservation_net_unused_amortized_upfront_fee,
        {{ billing_to_amount(col('reservation_unused_recurring_fee')) }}
            as reservation_unused_recurring_fee,
        {{ billing_to_amount(col('reservation_net_unused_recurring_fee')) }}
            as reservation_net_unused_recurring_fee,
        {{ col('savings_plan_savings_plan_a_r_n') }} as savings_plan_arn,
        {{ billing_to_amount(col('savings_plan_savings_plan_effective_cost')) }}
            as savings_plan_effective_cost,
        {{ billing_to_amount(col('savings_plan_net_savings_plan_effective_cost')) }}
            as savings_plan_net_effective_cost,
        {{ billing_to_amount(col('savings_plan_total_commitment_to_date')) }}
            as savings_plan_total_commitment,
        {{ billing_to_amount(col('savings_plan_used_commitment')) }}
            as savings_plan_used_commitment,
        case
            when {{ billing_is_json_object(col('resource_tags')) }}
                then {{ col('resource_tags') }}
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
