{#- True when billing_aws_effective_cost could not use the line's net figure (the net_ columns
    are absent or empty for the line) and fell back to a non-net one. Lines whose effective
    cost is 0 by rule never fall back. -#}
{% macro billing_aws_is_net_cost_fallback() -%}
    case
        when line_item_type in ('SavingsPlanNegation', 'SavingsPlanUpfrontFee') then false
        when line_item_type like '%Discount' then false
        when line_item_type = 'Fee' and reservation_arn is not null then false
        when line_item_type = 'DiscountedUsage' then reservation_net_effective_cost is null
        when line_item_type = 'SavingsPlanCoveredUsage'
            then savings_plan_net_effective_cost is null
        when line_item_type = 'RIFee'
            and coalesce(
                reservation_net_unused_amortized_upfront_fee,
                reservation_net_unused_recurring_fee,
                reservation_unused_amortized_upfront_fee,
                reservation_unused_recurring_fee
            ) is not null
            then reservation_net_unused_amortized_upfront_fee is null
            and reservation_net_unused_recurring_fee is null
        else net_unblended_cost is null
    end
{%- endmacro %}
