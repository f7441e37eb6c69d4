{#- Step 0 of normalizing an AWS CUR line (both formats): a select over `relation`, which holds
    the load metadata and the CUR columns as strings under canonical names (the `source` CTE of
    the two AWS staging models), giving each its type. -#}
{% macro billing_aws_typed(relation, source_format) -%}
    select
        '{{ source_format }}' as source_format,
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        billing_account_id,
        sub_account_id,
        cast({{ to_utc_timestamp('billing_period_start') }} as date) as billing_period_start,
        {{ to_utc_timestamp('charge_period_start') }} as charge_period_start,
        {{ to_utc_timestamp('charge_period_end') }} as charge_period_end,
        line_item_type,
        product_code,
        usage_type,
        operation,
        resource_id,
        {{ billing_to_amount('usage_amount') }} as usage_amount,
        currency,
        line_item_description,
        product_family,
        instance_type,
        coalesce(region_code, region) as region,
        pricing_unit,
        {%- for amount in [
            'unblended_cost',
            'net_unblended_cost',
            'public_on_demand_cost',
            'reservation_effective_cost',
            'reservation_net_effective_cost',
            'reservation_unused_amortized_upfront_fee',
            'reservation_net_unused_amortized_upfront_fee',
            'reservation_unused_recurring_fee',
            'reservation_net_unused_recurring_fee',
            'savings_plan_effective_cost',
            'savings_plan_net_effective_cost',
            'savings_plan_total_commitment',
            'savings_plan_used_commitment',
        ] %}
        {{ billing_to_amount(amount) }} as {{ amount }},
        {%- endfor %}
        reservation_arn,
        savings_plan_arn,
        case when {{ billing_is_json_object('tags') }} then tags else '{}' end as tags
    from {{ relation }}
{%- endmacro %}
