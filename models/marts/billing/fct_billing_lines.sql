{#- Every line of every cloud bill (AWS CUR legacy and 2.0, Google Cloud detailed export, Azure
    amortized cost details, FOCUS), one row per source line, in one FOCUS-shaped billing-line
    model with its net amortized cost. Over all lines effective_cost sums to the bills. -#}

with

billing_lines as (
    select * from {{ ref('int_billing_lines_unioned') }}
),

final as (
    select
        cast(billing_line_id as {{ dbt.type_string() }}) as billing_line_id,
        cast(provider as {{ dbt.type_string() }}) as provider,  -- noqa: RF04
        cast(source_format as {{ dbt.type_string() }}) as source_format,
        cast(source_file as {{ dbt.type_string() }}) as source_file,
        cast(source_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        cast(billing_account_id as {{ dbt.type_string() }}) as billing_account_id,
        cast(sub_account_id as {{ dbt.type_string() }}) as sub_account_id,
        cast(billing_period_start as date) as billing_period_start,
        cast(charge_period_start as {{ dbt.type_timestamp() }}) as charge_period_start,
        cast(charge_period_end as {{ dbt.type_timestamp() }}) as charge_period_end,
        cast(charge_date as date) as charge_date,
        cast(resource_id as {{ dbt.type_string() }}) as resource_id,
        cast(resource_key as {{ dbt.type_string() }}) as resource_key,
        cast(azure_vm_instance as {{ dbt.type_string() }}) as azure_vm_instance,
        cast(resource_type as {{ dbt.type_string() }}) as resource_type,
        cast(service_category as {{ dbt.type_string() }}) as service_category,
        cast(charge_category as {{ dbt.type_string() }}) as charge_category,
        cast(pricing_category as {{ dbt.type_string() }}) as pricing_category,
        cast(line_item_type as {{ dbt.type_string() }}) as line_item_type,
        cast(service_name as {{ dbt.type_string() }}) as service_name,
        cast(sku_description as {{ dbt.type_string() }}) as sku_description,
        cast(usage_type as {{ dbt.type_string() }}) as usage_type,
        cast(operation as {{ dbt.type_string() }}) as operation,  -- noqa: RF04
        cast(region as {{ dbt.type_string() }}) as region,
        cast(instance_type as {{ dbt.type_string() }}) as instance_type,
        cast(usage_quantity as double) as usage_quantity,
        cast(usage_unit as {{ dbt.type_string() }}) as usage_unit,
        cast(usage_hours as double) as usage_hours,
        cast(list_cost as decimal(38, 10)) as list_cost,
        cast(billed_cost as decimal(38, 10)) as billed_cost,
        cast(effective_cost as decimal(38, 10)) as effective_cost,
        cast(amortized_commitment_cost as decimal(38, 10)) as amortized_commitment_cost,
        cast(is_net_cost_fallback as {{ dbt.type_boolean() }}) as is_net_cost_fallback,
        cast(counts_as_resource_cost as {{ dbt.type_boolean() }}) as counts_as_resource_cost,
        cast(is_compute_instance_usage as {{ dbt.type_boolean() }}) as is_compute_instance_usage,
        cast(is_data_transfer as {{ dbt.type_boolean() }}) as is_data_transfer,
        cast(is_split_cost_row as {{ dbt.type_boolean() }}) as is_split_cost_row,
        cast(is_control_plane_fee as {{ dbt.type_boolean() }}) as is_control_plane_fee,
        cast(is_commitment_fee as {{ dbt.type_boolean() }}) as is_commitment_fee,
        cast(cud_credit_amount as decimal(38, 10)) as cud_credit_amount,
        cast(commitment_waste_cost as decimal(38, 10)) as commitment_waste_cost,
        cast(currency as {{ dbt.type_string() }}) as currency,
        cast(tags as {{ dbt.type_string() }}) as tags,
        cast(loaded_at as {{ dbt.type_timestamp() }}) as loaded_at,
        cast(source_currency as {{ dbt.type_string() }}) as source_currency,
        cast(exchange_rate as decimal(14, 8)) as exchange_rate,
        cast(source_list_cost as decimal(38, 10)) as source_list_cost,
        cast(source_billed_cost as decimal(38, 10)) as source_billed_cost,
        cast(source_effective_cost as decimal(38, 10)) as source_effective_cost
    from billing_lines
)

select * from final
