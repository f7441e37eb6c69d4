{#- One row per row of an Azure amortized cost details export, in the billing-line shape. -#}

with

source as (
    select
        _source_file,
        _row_number,
        _loaded_at,
        {{- billing_raw_select_list('azure', 'cost_details', [
            ('SubscriptionId', 'subscription_id'),
            ('SubscriptionGuid', 'subscription_guid'),
            ('BillingAccountId', 'billing_account_id'),
            ('Date', 'usage_date'),
            ('BillingPeriodStartDate', 'billing_period_start_date'),
            ('ResourceId', 'resource_id'),
            ('InstanceId', 'instance_id'),
            ('ResourceLocation', 'resource_location'),
            ('MeterCategory', 'meter_category'),
            ('MeterSubCategory', 'meter_subcategory'),
            ('MeterName', 'meter_name'),
            ('UnitOfMeasure', 'unit_of_measure'),
            ('Quantity', 'quantity'),
            ('CostInBillingCurrency', 'cost_in_billing_currency'),
            ('Cost', 'cost'),
            ('PayGPrice', 'payg_price'),
            ('BillingCurrencyCode', 'billing_currency_code'),
            ('BillingCurrency', 'billing_currency'),
            ('ChargeType', 'charge_type'),
            ('PricingModel', 'pricing_model'),
            ('Tags', 'tags'),
            ('AdditionalInfo', 'additional_info'),
        ]) }}
    from {{ source('azure', 'cost_details') }}
    -- rows a restatement superseded are kept only for the seals that reference them
    where _superseded_at is null
),

renamed as (
    select
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        coalesce(subscription_id, subscription_guid) as subscription_id,
        billing_account_id,
        {{ to_utc_timestamp('usage_date') }} as charge_period_start,
        cast({{ to_utc_timestamp('billing_period_start_date') }} as date) as billing_period_start,
        coalesce(resource_id, instance_id) as resource_id,
        lower(resource_location) as region,
        meter_category,
        meter_subcategory,
        meter_name,
        unit_of_measure,
        {{ billing_to_amount('quantity') }} as quantity,
        -- CostInBillingCurrency in current exports, Cost in older EA ones.
        coalesce(
            {{ billing_to_amount('cost_in_billing_currency') }},
            {{ billing_to_amount('cost') }}
        ) as cost_amount,
        {{ billing_to_amount('payg_price') }} as payg_price,
        coalesce(billing_currency_code, billing_currency) as currency,
        charge_type,
        lower(pricing_model) as pricing_model,
        -- Older exports write the tag pairs without the surrounding braces.
        case
            when tags is null then '{}'
            when left(tags, 1) = '{' then tags
            else {{ dbt.concat(["'{'", 'tags', "'}'"]) }}
        end as tags_braced,
        additional_info
    from source
),

parsed as (
    select
        *,
        case
            when {{ billing_is_json_object('additional_info') }}
                then {{ json_get_string('additional_info', 'VMName') }}
        end as additional_info_vm_name,
        case
            when {{ billing_is_json_object('additional_info') }}
                then {{ json_get_string('additional_info', 'ServiceType') }}
        end as additional_info_vm_size,
        -- An AKS node pool is one scale set: cost is keyed by the set, not its instances.
        case
            when lower(resource_id) like '%/virtualmachinescalesets/%'
                then regexp_extract(
                    lower(resource_id), '^(.*/virtualmachinescalesets/[^/]+)', 1
                )
            else lower(resource_id)
        end as resource_key
    from renamed
),

classified as (
    select
        *,
        {{ billing_resource_type_from_id('resource_key') }} as resource_type,
        coalesce(
            meter_category = 'Bandwidth' or lower(meter_name) like '%data transfer%', false
        ) as is_data_transfer,
        case
            -- the legacy pay-as-you-go / EA usage exports have no ChargeType: usage only
            when charge_type is null or lower(charge_type) = 'usage' then 'usage'
            when lower(charge_type) in ('purchase', 'unusedreservation', 'unusedsavingsplan')
                then 'purchase'
            when lower(charge_type) = 'tax' then 'tax'
            when lower(charge_type) = 'credit' then 'credit'
            else 'adjustment'
        end as charge_category,
        case
            when pricing_model = 'spot' then 'spot'
            when pricing_model = 'reservation' then 'reserved'
            when pricing_model in ('savingsplan', 'savings plan') then 'savings_plan'
            when lower(meter_name) like '% spot' then 'spot'
            else 'on_demand'
        end as pricing_category,
        coalesce(
            lower(charge_type) in ('unusedreservation', 'unusedsavingsplan')
            or (
                lower(charge_type) = 'purchase'
                and pricing_model in ('reservation', 'savingsplan', 'savings plan')
            ),
            false
        ) as is_commitment_fee
    from parsed
),

final as (
    select
        {{ surrogate_key(['source_file', 'source_row_number']) }} as billing_line_id,
        'azure' as provider,  -- noqa: RF04
        'azure_amortized' as source_format,
        source_file,
        source_row_number,
        coalesce(billing_account_id, subscription_id) as billing_account_id,
        subscription_id as sub_account_id,
        coalesce(
            billing_period_start,
            cast({{ dbt.date_trunc('month', 'charge_period_start') }} as date)
        ) as billing_period_start,
        charge_period_start,
        {{ dbt.dateadd('day', 1, 'charge_period_start') }} as charge_period_end,
        cast(charge_period_start as date) as charge_date,
        resource_id,
        resource_key,
        -- The scale set instance `<vmss>_<n>`: from AdditionalInfo, else from an instance ID.
        case
            when resource_key like '%/virtualmachinescalesets/%'
                then coalesce(
                    lower(additional_info_vm_name),
                    case
                        when lower(resource_id) like '%/virtualmachinescalesets/%/virtualmachines/%'
                            then {{ dbt.concat([
                                "regexp_extract(lower(resource_id), "
                                ~ "'/virtualmachinescalesets/([^/]+)/', 1)",
                                "'_'",
                                "regexp_extract(lower(resource_id), "
                                ~ "'/virtualmachines/([^/]+)', 1)",
                            ]) }}
                    end
                )
        end as azure_vm_instance,
        resource_type,
        case
            when is_data_transfer then 'network'
            when resource_type = 'instance' then 'compute'
            when resource_type = 'volume' then 'storage'
            when resource_type = 'load_balancer' then 'network'
            when meter_category in (
                'Virtual Machines', 'Azure Kubernetes Service', 'Container Instances', 'Functions'
            ) then 'compute'
            when meter_category = 'Storage' then 'storage'
            when meter_category in (
                'Bandwidth', 'Virtual Network', 'Load Balancer', 'Azure DNS', 'VPN Gateway',
                'Application Gateway', 'Azure Firewall', 'Network Watcher'
            ) then 'network'
            else 'other'
        end as service_category,
        charge_category,
        pricing_category,
        charge_type as line_item_type,
        meter_category as service_name,
        meter_name as sku_description,
        meter_subcategory as usage_type,
        cast(null as {{ dbt.type_string() }}) as operation,  -- noqa: RF04
        region,
        additional_info_vm_size as instance_type,
        cast(quantity as double) as usage_quantity,
        unit_of_measure as usage_unit,
        case
            when
                resource_type = 'instance'
                and charge_category = 'usage'
                and meter_category = 'Virtual Machines'
                and not is_data_transfer
                then cast(quantity as double)
        end as usage_hours,
        cast(coalesce(payg_price * quantity, cost_amount) as decimal(38, 10)) as list_cost,
        -- The amortized export has one cost: it is both what is billed and what is effective.
        cast(cost_amount as decimal(38, 10)) as billed_cost,
        cast(cost_amount as decimal(38, 10)) as effective_cost,
        false as is_net_cost_fallback,
        charge_category = 'usage' and resource_id is not null as counts_as_resource_cost,
        resource_type = 'instance'
        and charge_category = 'usage'
        and meter_category = 'Virtual Machines'
        and not is_data_transfer as is_compute_instance_usage,
        is_data_transfer,
        false as is_split_cost_row,
        coalesce(
            resource_key like '%/microsoft.containerservice/managedclusters/%'
            and charge_category = 'usage',
            false
        ) as is_control_plane_fee,
        is_commitment_fee,
        cast(0 as decimal(38, 10)) as cud_credit_amount,
        cast(
            case
                when lower(charge_type) in ('unusedreservation', 'unusedsavingsplan')
                    then cost_amount
                else 0
            end as decimal(38, 10)
        ) as commitment_waste_cost,
        currency,
        case
            when {{ billing_is_json_object('tags_braced') }} then tags_braced else '{}'
        end as tags,
        loaded_at
    from classified
)

select * from final
