{#- One row per line item of an AWS CUR 2.0 (Data Exports) file, in the billing-line shape. -#}

with

source as (
    select
        _source_file,
        _row_number,
        _loaded_at,
        {{- billing_raw_select_list('aws', 'cur2', [
            ('bill_payer_account_id', 'billing_account_id'),
            ('line_item_usage_account_id', 'sub_account_id'),
            ('bill_billing_period_start_date', 'billing_period_start'),
            ('line_item_usage_start_date', 'charge_period_start'),
            ('line_item_usage_end_date', 'charge_period_end'),
            ('line_item_line_item_type', 'line_item_type'),
            ('line_item_product_code', 'product_code'),
            ('line_item_usage_type', 'usage_type'),
            ('line_item_operation', 'operation'),
            ('line_item_resource_id', 'resource_id'),
            ('line_item_usage_amount', 'usage_amount'),
            ('line_item_currency_code', 'currency'),
            ('line_item_line_item_description', 'line_item_description'),
            ('product_product_family', 'product_family'),
            ('product_instance_type', 'instance_type'),
            ('product_region_code', 'region_code'),
            ('product_region', 'region'),
            ('pricing_unit', 'pricing_unit'),
            ('line_item_unblended_cost', 'unblended_cost'),
            ('line_item_net_unblended_cost', 'net_unblended_cost'),
            ('pricing_public_on_demand_cost', 'public_on_demand_cost'),
            ('reservation_reservation_a_r_n', 'reservation_arn'),
            ('reservation_effective_cost', 'reservation_effective_cost'),
            ('reservation_net_effective_cost', 'reservation_net_effective_cost'),
            (
                'reservation_unused_amortized_upfront_fee_for_billing_period',
                'reservation_unused_amortized_upfront_fee',
            ),
            (
                'reservation_net_unused_amortized_upfront_fee_for_billing_period',
                'reservation_net_unused_amortized_upfront_fee',
            ),
            ('reservation_unused_recurring_fee', 'reservation_unused_recurring_fee'),
            ('reservation_net_unused_recurring_fee', 'reservation_net_unused_recurring_fee'),
            ('savings_plan_savings_plan_a_r_n', 'savings_plan_arn'),
            ('savings_plan_savings_plan_effective_cost', 'savings_plan_effective_cost'),
            ('savings_plan_net_savings_plan_effective_cost', 'savings_plan_net_effective_cost'),
            ('savings_plan_total_commitment_to_date', 'savings_plan_total_commitment'),
            ('savings_plan_used_commitment', 'savings_plan_used_commitment'),
            ('resource_tags', 'tags'),
        ]) }}
    from {{ source('aws', 'cur2') }}
    -- rows a restatement superseded are kept only for the seals that reference them
    where _superseded_at is null
),

typed as (
    {{ billing_aws_typed('source', 'aws_cur2') }}
),

classified as (
    {{ billing_aws_classify('typed') }}
),

final as (
    {{ billing_aws_finalize('classified') }}
)

select * from final
