{#- One row per charge row of a FOCUS 1.0–1.2 export, in the billing-line shape. -#}

with

source as (
    select
        _source_file,
        _row_number,
        _loaded_at,
        {{- billing_raw_select_list('focus', 'billing', [
            ('BillingAccountId', 'billing_account_id'),
            ('SubAccountId', 'sub_account_id'),
            ('BillingPeriodStart', 'billing_period_start'),
            ('ChargePeriodStart', 'charge_period_start'),
            ('ChargePeriodEnd', 'charge_period_end'),
            ('ChargeCategory', 'charge_category'),
            ('ChargeDescription', 'charge_description'),
            ('BilledCost', 'billed_cost'),
            ('EffectiveCost', 'effective_cost'),
            ('ListCost', 'list_cost'),
            ('BillingCurrency', 'currency'),
            ('ResourceId', 'resource_id'),
            ('ResourceType', 'resource_type'),
            ('ServiceCategory', 'service_category'),
            ('ServiceSubcategory', 'service_subcategory'),
            ('ServiceName', 'service_name'),
            ('SkuId', 'sku_id'),
            ('RegionId', 'region'),
            ('PricingCategory', 'pricing_category'),
            ('CommitmentDiscountType', 'commitment_discount_type'),
            ('CommitmentDiscountStatus', 'commitment_discount_status'),
            ('ConsumedQuantity', 'consumed_quantity'),
            ('ConsumedUnit', 'consumed_unit'),
            ('Tags', 'tags'),
        ]) }}
    from {{ source('focus', 'billing') }}
    -- rows a restatement superseded are kept only for the seals that reference them
    where _superseded_at is null
),

renamed as (
    select
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        -- Azure's FOCUS export writes resource paths (`/providers/Microsoft.Billing/
        -- billingAccounts/<id>`, `/subscriptions/<guid>`): the IDs inside them are the ones the
        -- amortized export and a billing link's accounts use.
        case
            when lower(billing_account_id) like '/providers/microsoft.billing/billingaccounts/%'
                then regexp_extract(billing_account_id, '(?i)/billingaccounts/([^/]+)', 1)
            else billing_account_id
        end as billing_account_id,
        case
            when lower(sub_account_id) like '/subscriptions/%'
                then regexp_extract(sub_account_id, '(?i)^/subscriptions/([^/]+)', 1)
            else sub_account_id
        end as sub_account_id,
        cast({{ to_utc_timestamp('billing_period_start') }} as date) as billing_period_start,
        {{ to_utc_timestamp('charge_period_start') }} as charge_period_start,
        {{ to_utc_timestamp('charge_period_end') }} as charge_period_end,
        charge_category as charge_category_as_written,
        charge_description,
        {{ billing_to_amount('billed_cost') }} as billed_cost,
        {{ billing_to_amount('effective_cost') }} as effective_cost,
        {{ billing_to_amount('list_cost') }} as list_cost,
        currency,
        resource_id,
        lower(resource_type) as focus_resource_type,
        lower(service_category) as focus_service_category,
        lower(service_subcategory) as focus_service_subcategory,
        service_name,
        sku_id,
        region,
        lower(pricing_category) as focus_pricing_category,
        lower(commitment_discount_type) as commitment_discount_type,
        lower(commitment_discount_status) as commitment_discount_status,
        {{ billing_to_amount('consumed_quantity') }} as consumed_quantity,
        consumed_unit,
        case when {{ billing_is_json_object('tags') }} then tags else '{}' end as tags
    from source
),

classified as (
    select
        *,
        lower(resource_id) as resource_key,
        case
            when
                focus_resource_type like '%virtual machine%'
                or focus_resource_type like '%instance%'
                then 'instance'
            when
                focus_resource_type like '%disk%'
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
            when
                focus_pricing_category in ('committed', 'commitment-based')
                and commitment_discount_type like '%savings%'
                then 'savings_plan'
            when
                focus_pricing_category in ('committed', 'commitment-based')
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
        'focus' as provider,  -- noqa: RF04
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
        cast(null as {{ dbt.type_string() }}) as operation,  -- noqa: RF04
        region,
        cast(null as {{ dbt.type_string() }}) as instance_type,
        cast(consumed_quantity as double) as usage_quantity,
        consumed_unit as usage_unit,
        case
            when
                resource_type = 'instance'
                and charge_category = 'usage'
                and not is_data_transfer
                -- `Hours` (Azure, Google Cloud), `Hrs` (AWS)
                and (lower(consumed_unit) like 'hour%' or lower(consumed_unit) in ('hrs', 'hr'))
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
