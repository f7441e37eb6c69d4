-- The line flags agree with each other, so no cost can be counted on two paths: compute
-- instance usage is an instance's usage line that is neither data transfer nor a split row;
-- split rows are never resource cost; only compute instance usage carries hours; only
-- commitment fee rows carry commitment waste; only Google lines carry a commitment spread.
-- Returns the lines that break a rule, with the rule.
with

billing_lines as (
    select
        billing_line_id,
        provider,
        resource_type,
        charge_category,
        usage_hours,
        amortized_commitment_cost,
        commitment_waste_cost,
        counts_as_resource_cost,
        is_compute_instance_usage,
        is_data_transfer,
        is_split_cost_row,
        is_commitment_fee
    from {{ ref('fct_billing_lines') }}
),

violations as (
    select
        billing_line_id,
        case
            when
                is_compute_instance_usage
                and (
                    resource_type != 'instance'
                    or charge_category != 'usage'
                    or is_data_transfer
                    or is_split_cost_row
                )
                then 'compute instance usage that is not an instance usage line'
            when is_split_cost_row and counts_as_resource_cost
                then 'split row counted as resource cost'
            when usage_hours is not null and not is_compute_instance_usage
                then 'usage hours on a line that is not compute instance usage'
            when commitment_waste_cost != 0 and not is_commitment_fee
                then 'commitment waste on a line that is not a commitment fee'
            when amortized_commitment_cost != 0 and provider != 'gcp'
                then 'commitment spread outside Google Cloud'
        end as broken_rule
    from billing_lines
),

final as (
    select
        billing_line_id,
        broken_rule
    from violations
    where broken_rule is not null
)

select * from final
