{#- One row per row of a Google Cloud detailed usage cost export, in the billing-line shape. -#}

with

source as (
    select
        _source_file,
        _row_number,
        _loaded_at,
        {{- billing_raw_select_list('gcp', 'billing_export', [
            ('billing_account_id', 'billing_account_id'),
            ('project_id', 'project_id'),
            ('invoice_month', 'invoice_month'),
            ('usage_start_time', 'usage_start_time'),
            ('usage_end_time', 'usage_end_time'),
            ('service_description', 'service_description'),
            ('sku_id', 'sku_id'),
            ('sku_description', 'sku_description'),
            ('resource_name', 'resource_name'),
            ('resource_global_name', 'resource_global_name'),
            ('location_region', 'location_region'),
            ('location_location', 'location_location'),
            ('location_zone', 'location_zone'),
            ('cost_type', 'cost_type'),
            ('cost', 'cost'),
            ('cost_at_list', 'cost_at_list'),
            ('credits', 'credits'),
            ('usage_amount', 'usage_amount'),
            ('usage_unit', 'usage_unit'),
            ('currency', 'currency'),
            ('labels', 'labels'),
            ('system_labels', 'system_labels'),
        ]) }}
    from {{ source('gcp', 'billing_export') }}
    -- rows a restatement superseded are kept only for the seals that reference them
    where _superseded_at is null
),

renamed as (
    select
        _source_file as source_file,
        cast(_row_number as bigint) as source_row_number,
        {{ to_utc_timestamp('cast(_loaded_at as ' ~ dbt.type_string() ~ ')') }} as loaded_at,
        billing_account_id,
        project_id,
        invoice_month,
        {{ to_utc_timestamp('usage_start_time') }} as charge_period_start,
        {{ to_utc_timestamp('usage_end_time') }} as charge_period_end,
        service_description,
        sku_id,
        sku_description,
        resource_name,
        resource_global_name,
        coalesce(location_region, location_location) as region,
        location_zone,
        cost_type,
        {{ billing_to_amount('cost') }} as gcp_cost,
        {{ billing_to_amount('cost_at_list') }} as cost_at_list,
        {{ billing_json_array_sum('credits') }} as credits_amount,
        -- Resource-based and spend-based committed use discounts alike.
        {{ billing_json_array_sum(
            'credits',
            type_values=['COMMITTED_USAGE_DISCOUNT', 'COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE']
        ) }} as cud_credit_amount,
        {{ billing_to_amount('usage_amount') }} as usage_amount,
        usage_unit,
        currency,
        coalesce({{ billing_key_value_array_to_json('labels') }}, '{}') as tags,
        {{ billing_key_value_array_to_json('system_labels') }} as system_labels
    from source
),

classified as (
    select
        *,
        {{ billing_to_amount(
            json_get_string('system_labels', 'compute.googleapis.com/cores')
        ) }} as machine_cores,
        {{ json_get_string('system_labels', 'compute.googleapis.com/machine_spec') }}
            as machine_spec,
        coalesce(lower(sku_description) like 'commitment%', false) as is_commitment_fee,
        coalesce(
            lower(sku_description) like '%egress%'
            or lower(sku_description) like '%data transfer%'
            or lower(sku_description) like '%inter-zone%'
            or lower(sku_description) like '%inter zone%'
            or lower(sku_description) like '%inter-region%'
            or lower(sku_description) like '%inter region%',
            false
        ) as is_data_transfer,
        coalesce(
            service_description = 'Kubernetes Engine'
            and (
                lower(sku_description) like '%cluster management fee%'
                or lower(sku_description) like '%kubernetes clusters%'
            ),
            false
        ) as is_control_plane_fee,
        case
            when lower(sku_description) like 'commitment%' then 'other'
            when
                {{ billing_resource_type_from_id(
                    'lower(coalesce(resource_global_name, resource_name))'
                ) }} != 'other'
                then {{ billing_resource_type_from_id(
                    'lower(coalesce(resource_global_name, resource_name))'
                ) }}
            when
                resource_name is not null
                and service_description = 'Compute Engine'
                and (
                    lower(sku_description) like '%instance core%'
                    or lower(sku_description) like '%instance ram%'
                    or lower(sku_description) like '%core running%'
                    or lower(sku_description) like '%ram running%'
                )
                then 'instance'
            when
                resource_name is not null
                and (
                    lower(sku_description) like '%pd capacity%'
                    or lower(sku_description) like 'hyperdisk%'
                )
                then 'volume'
            else 'other'
        end as resource_type
    from renamed
),

keyed as (
    select
        *,
        case
            -- Nodes are matched by instance name: the last segment of resource.name.
            when resource_type = 'instance'
                then lower(
                    regexp_extract(coalesce(resource_name, resource_global_name), '([^/]+)$', 1)
                )
            -- PVs carry the disk path projects/<p>/zones/<z>/disks/<name> as CSI volume handle.
            when resource_type = 'volume' and lower(resource_name) like '%projects/%/disks/%'
                then regexp_extract(
                    lower(resource_name), '(projects/[^/]+/[^/]+/[^/]+/disks/[^/]+)$', 1
                )
            when resource_type = 'volume'
                then lower(
                    {{ dbt.concat([
                        "'projects/'",
                        'project_id',
                        "case when location_zone is not null then '/zones/' else '/regions/' end",
                        'coalesce(location_zone, region)',
                        "'/disks/'",
                        "regexp_extract(resource_name, '([^/]+)$', 1)",
                    ]) }}
                )
            else lower(coalesce(resource_name, resource_global_name))
        end as resource_key,
        case
            when lower(sku_description) like 'commitment%' then 'commitment'
            when gcp_cost = 0 and credits_amount != 0 then 'credit'
            else coalesce(cost_type, 'regular')
        end as line_item_type
    from classified
),

categorized as (
    select
        *,
        case
            when line_item_type = 'commitment' then 'purchase'
            when line_item_type = 'credit' then 'credit'
            when line_item_type = 'tax' then 'tax'
            when line_item_type = 'regular' then 'usage'
            else 'adjustment'
        end as charge_category,
        case
            when lower(sku_description) like '%spot%' then 'spot'
            when lower(sku_description) like '%preemptible%' then 'spot'
            when is_commitment_fee or cud_credit_amount != 0 then 'committed'
            else 'on_demand'
        end as pricing_category
    from keyed
),

final as (
    select
        {{ surrogate_key(['source_file', 'source_row_number']) }} as billing_line_id,
        'gcp' as provider,  -- noqa: RF04
        'gcp_detailed' as source_format,
        source_file,
        source_row_number,
        billing_account_id,
        project_id as sub_account_id,
        coalesce(
            cast({{ to_utc_timestamp(dbt.concat([
                'left(invoice_month, 4)', "'-'", 'substr(invoice_month, 5, 2)', "'-01'"
            ])) }} as date),
            cast({{ dbt.date_trunc('month', 'charge_period_start') }} as date)
        ) as billing_period_start,
        charge_period_start,
        charge_period_end,
        cast(charge_period_start as date) as charge_date,
        coalesce(resource_name, resource_global_name) as resource_id,
        resource_key,
        cast(null as {{ dbt.type_string() }}) as azure_vm_instance,
        resource_type,
        case
            when is_data_transfer then 'network'
            when resource_type = 'instance' then 'compute'
            when resource_type = 'volume' then 'storage'
            when resource_type = 'load_balancer' then 'network'
            when
                lower(sku_description) like '%storage%'
                or lower(sku_description) like '%snapshot%'
                or service_description in ('Cloud Storage', 'Filestore')
                then 'storage'
            when
                lower(sku_description) like '%network%'
                or lower(sku_description) like '%load balanc%'
                or lower(sku_description) like '%ip address%'
                or service_description in ('Networking', 'Cloud DNS', 'Cloud CDN')
                then 'network'
            when service_description in (
                'Compute Engine', 'Kubernetes Engine', 'Cloud Run', 'Cloud Functions'
            ) then 'compute'
            else 'other'
        end as service_category,
        charge_category,
        pricing_category,
        line_item_type,
        service_description as service_name,
        sku_description,
        sku_id as usage_type,
        cast(null as {{ dbt.type_string() }}) as operation,  -- noqa: RF04
        region,
        machine_spec as instance_type,
        cast(usage_amount as double) as usage_quantity,
        usage_unit,
        -- Instance Core usage is in vCPU-seconds: divided by the machine's cores it is the hours
        -- the instance ran. Only the core row carries hours, so RAM rows don't double them.
        case
            when
                resource_type = 'instance'
                and charge_category = 'usage'
                and not is_data_transfer
                and service_description = 'Compute Engine'
                and lower(sku_description) like '%core%'
                and usage_unit = 'seconds'
                then
                    cast(usage_amount as double)
                    / 3600
                    / coalesce(cast(nullif(machine_cores, 0) as double), 1)
        end as usage_hours,
        cast(coalesce(cost_at_list, gcp_cost) as decimal(38, 10)) as list_cost,
        cast(gcp_cost + credits_amount as decimal(38, 10)) as billed_cost,
        cast(gcp_cost + credits_amount as decimal(38, 10)) as effective_cost,
        false as is_net_cost_fallback,
        charge_category = 'usage'
        and coalesce(resource_name, resource_global_name) is not null as counts_as_resource_cost,
        resource_type = 'instance'
        and charge_category = 'usage'
        and not is_data_transfer
        and service_description = 'Compute Engine' as is_compute_instance_usage,
        is_data_transfer,
        false as is_split_cost_row,
        is_control_plane_fee,
        is_commitment_fee,
        cud_credit_amount,
        -- The unspread part of a commitment fee is known only after the spread
        -- (int_billing_lines_unioned).
        cast(0 as decimal(38, 10)) as commitment_waste_cost,
        currency,
        tags,
        loaded_at
    from categorized
)

select * from final
