{#- The net amortized cost of an AWS CUR line (SPEC §3.2), over the canonical column names the
    AWS staging models rename both CUR formats to. The net_ figure is preferred; when the line
    has none, the non-net figure is used (billing_aws_is_net_cost_fallback says so).
    - Usage, Tax, Credit, Refund, other Fee: (net) unblended cost.
    - DiscountedUsage: (net) reservation effective cost (amortized upfront + recurring).
    - SavingsPlanCoveredUsage: (net) savings-plan effective cost.
    - SavingsPlanNegation, SavingsPlanUpfrontFee, *Discount, reservation upfront Fee: 0, since
      covered usage and net_ figures already carry them.
    - RIFee: (net) unused amortized upfront + (net) unused recurring fee: reservation waste.
      Without those columns: the (net) fee less the reservation's DiscountedUsage effective
      cost in the same period (exact for no-upfront reservations).
    - SavingsPlanRecurringFee: the unused commitment, TotalCommitmentToDate - UsedCommitment,
      net of discounts in the line's net/unblended ratio. The used part is already in the
      covered usage lines' effective cost; the whole fee here would count it twice. Without the
      two commitment columns: the (net) fee less the plan's SavingsPlanCoveredUsage effective
      cost in the same period (exact for no-upfront plans).
    Needs the window columns savings_plan_covered_effective_cost and
    reservation_covered_effective_cost of billing_aws_classify. -#}
{% macro billing_aws_effective_cost() -%}
    cast(
        case
            when line_item_type in ('SavingsPlanNegation', 'SavingsPlanUpfrontFee') then 0
            when line_item_type like '%Discount' then 0
            when line_item_type = 'Fee' and reservation_arn is not null then 0
            when line_item_type = 'DiscountedUsage'
                then coalesce(
                    reservation_net_effective_cost,
                    reservation_effective_cost,
                    net_unblended_cost,
                    unblended_cost
                )
            when line_item_type = 'SavingsPlanCoveredUsage'
                then coalesce(
                    savings_plan_net_effective_cost,
                    savings_plan_effective_cost,
                    net_unblended_cost,
                    unblended_cost
                )
            when line_item_type = 'RIFee'
                and (
                    reservation_net_unused_amortized_upfront_fee is not null
                    or reservation_net_unused_recurring_fee is not null
                )
                then coalesce(reservation_net_unused_amortized_upfront_fee, 0)
                + coalesce(reservation_net_unused_recurring_fee, 0)
            when line_item_type = 'RIFee'
                and (
                    reservation_unused_amortized_upfront_fee is not null
                    or reservation_unused_recurring_fee is not null
                )
                then coalesce(reservation_unused_amortized_upfront_fee, 0)
                + coalesce(reservation_unused_recurring_fee, 0)
            when line_item_type = 'RIFee'
                then coalesce(net_unblended_cost, unblended_cost)
                - coalesce(reservation_covered_effective_cost, 0)
            when line_item_type = 'SavingsPlanRecurringFee'
                and savings_plan_total_commitment is not null
                and savings_plan_used_commitment is not null
                then (savings_plan_total_commitment - savings_plan_used_commitment)
                * coalesce({{ safe_divide('net_unblended_cost', 'unblended_cost') }}, 1)
            when line_item_type = 'SavingsPlanRecurringFee'
                then coalesce(net_unblended_cost, unblended_cost)
                - coalesce(savings_plan_covered_effective_cost, 0)
            else coalesce(net_unblended_cost, unblended_cost)
        end
        as decimal(38, 10)
    )
{%- endmacro %}
