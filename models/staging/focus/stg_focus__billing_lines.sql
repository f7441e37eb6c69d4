{#- One row per charge row of a FOCUS 1.0–1.2 export, in the billing-line shape. -#}
{%- set raw_columns = billing_raw_columns('focus', 'billing') -%}
{%- macro col(name) -%}{{ billing_raw_column(raw_columns, name) }}{%- endmacro -%}

with

source as (
    select * from {{ source('focus', 'billing') }}
),

renamed as (
    select
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        {{ col('BillingAccountId') }} as billing_account_id,
        {{ col('SubAccountId') }} as sub_account_id,
        cast({{ to_utc_timestamp(col('BillingPeriodStart')) }} as date) as billing_period_start,
        {{ to_utc_timestamp(col('ChargePeriodStart')) }} as charge_period_start,
        {{ to_utc_timestamp(col('ChargePeriodEnd')) }} as charge_period_end,
        {{ col('ChargeCategory') }} as charge_category_as_written,
        {{ col('ChargeDescription') }} as charge_description,
        {{ billing_to_amount(col('BilledCost')) }} as billed_cost,
        {{ billing_to_amount(col('EffectiveCost')) }} as effective_cost,
        {{ billing_to_amount(col('ListCost')) }} as list_cost,
        {{ col('BillingCurrency') }} as currency,
        {{ col('ResourceId') }} as resource_id,
        lower({{ col('ResourceType') }}) as focus_resource_type,
        lower({{ col('ServiceCategory') }}) as focus_service_category,
        lower({{ col('ServiceSubcategory') }}) as focus_service_subcategory,
        {{ col('ServiceName') }} as service_name,
        {{ col('SkuId') }} as sku_id,
        {{ col('RegionId') }} as region,
        lower({{ col('PricingCategory') }}) as focus_pricing_category,
        lower({{ col('CommitmentDiscountType') }}) as commitment_discount_type,
        lower({{ col('CommitmentDiscountStatus') }}) as commitment_discount_status,
        {{ billing_to_amount(col('ConsumedQuantity')) }} as consumed_quantity,
        {{ col('ConsumedUnit') }} as consumed_unit,
        case
            when {{ billing_is_json_object(col('Tags')) }} then {{ col('Tags') }} else '{}'
        end as tags
    from source
),

classified as (
    select
        *,
        lower(resource_id) as resource_key,
        case
            when focus_resource_type like '%virtual machine%'
                or focus_resource_type like '%instance%'
                then 'instance'
            when focus_resource_type like '%disk%'
                or focus_resource_type like '%volume%'
                then 'volume'
            when focus_resource_type like '%load balancer%' then 'load_balancer'
            else {{ billing_resource_type_from_id('lower(resource_id)') }}
        end as resource_type,
        case lower(charge_category_as_written)
            when 'usage' then 'usage'
            when 'purchase' then 'purchase'
            when 'tax' then 'tax'
            when 'credit' then 'credit'
            else 'adjustment'
        end as charge_category,
        coalesce(
            focus_service_subcategory like '%network traffic%'
            or focus_service_subcategory like '%data transfer%'
            or lower(charge_description) like '%data transfer%'
            or lower(charge_description) like '%egress%',
            false
        ) as is_data_transfer,
        -- FOCUS 1.0 names first; the 1.0-preview names (On-Demand, Spot, Commitment-Based) too.
        case
            when focus_pricing_category in ('dynamic', 'spot') then 'spot'
            when focus_pricing_category in ('committed', 'commitment-based')
                and commitment_discount_type like '%savings%'
                then 'savings_plan'
            when focus_pricing_category in ('committed', 'commitment-based')
                and commitment_discount_type like '%reserv%'
                then 'reserved'
            when focus_pricing_category in ('committed', 'commitment-based') then 'committed'
            else 'on_demand'
        end as pricing_category
    from renamed
),

final as (
    select
        {{ surrogate_key(['source_file', 'source_row_number']) }} as billing_line_id,
        'focus' as provider,
        'focus' as source_format,
        source_file,
        source_row_number,
        billing_account_id,
        sub_account_id,
        coalesce(
            billing_period_start,
            cast({{ dbt.date_trunc('month', 'charge_period_start') }} as date)
        ) as billing_period_start,
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
            when focus_service_category = 'compute' then 'compute'
            when focus_service_category = 'storage' then 'storage'
            when focus_service_category = 'networking' then 'network'
            else 'other'
        end as service_category,
        charge_category,
        pricing_category,
        charge_category_as_written as line_item_type,
        service_name,
        charge_description as sku_description,
        sku_id as usage_type,
        cast(null as {{ dbt.type_string() }}) as operation,
        region,
        cast(null as {{ dbt.type_string() }}) as instance_type,
        cast(consumed_quantity as double) as usage_quantity,
        consumed_unit as usage_unit,
        case
            when resource_type = 'instance'
                and charge_category = 'usage'
                and not is_data_transfer
                and lower(consumed_unit) like 'hour%'
                then cast(consumed_quantity as double)
        end as usage_hours,
        cast(coalesce(list_cost, billed_cost) as decimal(38, 10)) as list_cost,
        cast(billed_cost as decimal(38, 10)) as billed_cost,
        cast(effective_cost as decimal(38, 10)) as effective_cost,
        false as is_net_cost_fallback,
        charge_category = 'usage' and resource_id is not null as counts_as_resource_cost,
        resource_type = 'instance'
        and charge_category = 'usage'
        and not is_data_transfer as is_compute_instance_usage,
        is_data_transfer,
        false as is_split_cost_row,
        coalesce(
            resource_key like 'arn:aws:eks:%:cluster/%'
            or resource_key like '%/microsoft.containerservice/managedclusters/%'
            or lower(charge_description) like '%cluster management fee%',
            false
        ) as is_control_plane_fee,
        coalesce(
            (charge_category = 'purchase' and commitment_discount_type is not null)
            or commitment_discount_status = 'unused',
            false
        ) as is_commitment_fee,
        cast(0 as decimal(38, 10)) as cud_credit_amount,
        cast(
            case when commitment_discount_status = 'unused' then effective_cost else 0 end
            as decimal(38, 10)
        ) as commitment_waste_cost,
        currency,
        tags,
        loaded_at
    from classified
)

select * from final
