{#- Step 1 of normalizing an AWS CUR line (both formats): a select over `relation`, which has
    the canonical column names (see stg_aws__cur2_billing_lines), adding what the line is:
    resource key and type, data transfer, EKS/ECS split row, EKS control-plane fee, charge and
    pricing category, commitment fee, and what each savings plan / reservation covered in the
    line's period (a window over the plan's lines: no join, the grain stays one row per line). -#}
{% macro billing_aws_classify(relation) -%}
    select
        *,
        lower(resource_id) as resource_key,
        {{ billing_resource_type_from_id('lower(resource_id)') }} as resource_type,
        coalesce(
            usage_type like '%DataTransfer%'
            or usage_type like '%-In-Bytes%'
            or usage_type like '%-Out-Bytes%'
            or product_family = 'Data Transfer'
            or product_code = 'AWSDataTransfer',
            false
        ) as is_data_transfer,
        -- Split cost allocation rows share out an instance that is billed on its own lines.
        coalesce(operation in ('EKSPod-EC2', 'ECSTask-EC2'), false) as is_split_cost_row,
        coalesce(
            product_code = 'AmazonEKS'
            and (usage_type like '%perCluster%' or usage_type like '%extendedSupport%'),
            false
        ) as is_control_plane_fee,
        case
            when line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage')
                then 'usage'
            when line_item_type in (
                'RIFee', 'Fee', 'SavingsPlanRecurringFee', 'SavingsPlanUpfrontFee'
            ) then 'purchase'
            when line_item_type = 'Tax' then 'tax'
            when line_item_type = 'Credit' or line_item_type like '%Discount' then 'credit'
            else 'adjustment'
        end as charge_category,
        case
            when savings_plan_arn is not null or line_item_type like 'SavingsPlan%'
                then 'savings_plan'
            when reservation_arn is not null or line_item_type in ('DiscountedUsage', 'RIFee')
                then 'reserved'
            when usage_type like '%SpotUsage%' then 'spot'
            else 'on_demand'
        end as pricing_category,
        coalesce(
            line_item_type in ('SavingsPlanRecurringFee', 'SavingsPlanUpfrontFee', 'RIFee')
            or (line_item_type = 'Fee' and reservation_arn is not null),
            false
        ) as is_commitment_fee,
        -- What each commitment covered in the line's period (net where the line has it): a
        -- fee line without its unused-commitment columns is the fee less this.
        sum(
            case
                when line_item_type = 'SavingsPlanCoveredUsage'
                    then coalesce(savings_plan_net_effective_cost, savings_plan_effective_cost)
            end
        ) over (partition by savings_plan_arn, charge_period_start)
            as savings_plan_covered_effective_cost,
        sum(
            case
                when line_item_type = 'DiscountedUsage'
                    then coalesce(reservation_net_effective_cost, reservation_effective_cost)
            end
        ) over (partition by reservation_arn, charge_period_start)
            as reservation_covered_effective_cost
    from {{ relation }}
{%- endmacro %}
