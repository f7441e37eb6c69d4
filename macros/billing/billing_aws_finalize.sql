{#- Step 2 of normalizing an AWS CUR line (both formats): a select over the output of
    billing_aws_classify giving the billing-line shape (billing_line_columns), with the net
    amortized cost of billing_aws_effective_cost. -#}
{% macro billing_aws_finalize(relation) -%}
    select
        {{ surrogate_key(['source_file', 'source_row_number']) }} as billing_line_id,
        'aws' as provider,  -- noqa: RF04
        source_format,
        source_file,
        source_row_number,
        billing_account_id,
        sub_account_id,
        billing_period_start,
        charge_period_start,
        charge_period_end,
        cast(charge_period_start as date) as charge_date,
        resource_id,
        resource_key,
        cast(null as {{ dbt.type_string() }}) as azure_vm_instance,
        resource_type,
        case
            when is_data_transfer then 'network'
            when resource_type = 'instance' then 'compute'
            when resource_type = 'volume' then 'storage'
            when resource_type = 'load_balancer' then 'network'
            when product_family in ('Compute Instance', 'Dedicated Host', 'CPU Credits')
                or product_code in ('AmazonEKS', 'AmazonECS', 'AWSLambda')
                then 'compute'
            when product_family like 'Storage%'
                or product_code in ('AmazonS3', 'AmazonEFS', 'AmazonFSx', 'AWSBackup')
                then 'storage'
            when product_family like 'Load Balancer%'
                or product_family in ('NAT Gateway', 'IP Address', 'VpcEndpoint')
                or product_code in ('AmazonVPC', 'AmazonCloudFront', 'AmazonRoute53', 'AWSELB')
                then 'network'
            else 'other'
        end as service_category,
        charge_category,
        pricing_category,
        line_item_type,
        product_code as service_name,
        line_item_description as sku_description,
        usage_type,
        operation,
        region,
        instance_type,
        cast(usage_amount as double) as usage_quantity,
        pricing_unit as usage_unit,
        case
            when is_compute_instance_usage
                and (
                    usage_type like '%BoxUsage%'
                    or usage_type like '%SpotUsage%'
                    or usage_type like '%DedicatedUsage%'
                    or line_item_type in ('DiscountedUsage', 'SavingsPlanCoveredUsage')
                )
                then cast(usage_amount as double)
        end as usage_hours,
        cast(coalesce(public_on_demand_cost, unblended_cost) as decimal(38, 10)) as list_cost,
        cast(unblended_cost as decimal(38, 10)) as billed_cost,
        effective_cost,
        is_net_cost_fallback,
        charge_category = 'usage'
        and resource_id is not null
        and not is_split_cost_row as counts_as_resource_cost,
        is_compute_instance_usage,
        is_data_transfer,
        is_split_cost_row,
        is_control_plane_fee,
        is_commitment_fee,
        cast(0 as decimal(38, 10)) as cud_credit_amount,
        cast(
            case
                when line_item_type in ('RIFee', 'SavingsPlanRecurringFee') then effective_cost
                else 0
            end as decimal(38, 10)
        ) as commitment_waste_cost,
        currency,
        tags,
        loaded_at
    from (
        select
            *,
            {{ billing_aws_effective_cost() }} as effective_cost,
            {{ billing_aws_is_net_cost_fallback() }} as is_net_cost_fallback,
            resource_type = 'instance'
            and line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage')
            and not is_data_transfer
            and not is_split_cost_row as is_compute_instance_usage
        from {{ relation }}
    ) as costed
{%- endmacro %}
