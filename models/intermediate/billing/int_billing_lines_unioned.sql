{#- Every cloud bill line of every format in one billing-line shape: the AWS (both CUR
    formats), Google Cloud, Azure and FOCUS staging models unioned by column name, plus the
    Google Cloud commitment fee spread as `amortized_commitment_cost` and the unspread part of
    Google commitment fees as commitment waste. One row per source billing line.

    A line in another currency than the billing currency (`currency:` of kubeledger.yml) is
    converted by the `exchange_rates:` rate of its currency in effect on its charge date (the
    latest effective_from on or before it; SPEC §3.3): every cost column is multiplied in
    decimal and rounded half up to the 10 places of the billing columns, the line's original
    currency, amounts and rate kept in source_currency, source_*_cost and exchange_rate. A line
    no rate covers keeps its amounts and currency (the quality gate refuses such a line when
    its account also has lines in the billing currency). -#}

with

aws_cur_legacy_lines as (
    select * from {{ ref('stg_aws__cur_legacy_billing_lines') }}
),

aws_cur2_lines as (
    select * from {{ ref('stg_aws__cur2_billing_lines') }}
),

gcp_lines as (
    select * from {{ ref('stg_gcp__billing_lines') }}
),

azure_lines as (
    select * from {{ ref('stg_azure__billing_lines') }}
),

focus_lines as (
    select * from {{ ref('stg_focus__billing_lines') }}
),

commitment_fees_spread as (
    select
        billing_line_id,
        amortized_commitment_cost
    from {{ ref('int_gcp_commitment_fees_spread') }}
),

unioned as (
    select {{ billing_line_columns() | join(', ') }}
    from aws_cur_legacy_lines
    union all
    select {{ billing_line_columns() | join(', ') }}
    from aws_cur2_lines
    union all
    select {{ billing_line_columns() | join(', ') }}
    from gcp_lines
    union all
    select {{ billing_line_columns() | join(', ') }}
    from azure_lines
    union all
    select {{ billing_line_columns() | join(', ') }}
    from focus_lines
),

settings as (
    select upper(trim(currency)) as billing_currency
    from {{ ref('stg_config__settings') }}
),

exchange_rates as (
    select
        from_currency,
        to_currency,
        rate,
        effective_from
    from {{ ref('stg_config__exchange_rates') }}
),

-- The rate of each line not in the billing currency: the latest one starting on or before
-- its charge date (one per from/to/effective_from, so no tie).
line_rates as (
    {{ rates_in_effect(
        'unioned', ['billing_line_id'], 'charge_date', 'settings', 'settings.billing_currency'
    ) }}
),

converted as (
    select
        unioned.*,
        line_rates.rate as exchange_rate,
        cast(
            coalesce(commitment_fees_spread.amortized_commitment_cost, 0) as decimal(38, 10)
        ) as source_amortized_commitment_cost,
        case
            when line_rates.rate is not null then settings.billing_currency
            else unioned.currency
        end as billing_currency
    from unioned
    cross join settings
    left join line_rates
        on unioned.billing_line_id = line_rates.billing_line_id
    left join commitment_fees_spread
        on unioned.billing_line_id = commitment_fees_spread.billing_line_id
),

final as (
    select
        unioned.billing_line_id,
        unioned.provider,  -- noqa: RF04
        unioned.source_format,
        unioned.source_file,
        unioned.source_row_number,
        unioned.billing_account_id,
        unioned.sub_account_id,
        unioned.billing_period_start,
        unioned.charge_period_start,
        unioned.charge_period_end,
        unioned.charge_date,
        unioned.resource_id,
        unioned.resource_key,
        unioned.azure_vm_instance,
        unioned.resource_type,
        unioned.service_category,
        unioned.charge_category,
        unioned.pricing_category,
        unioned.line_item_type,
        unioned.service_name,
        unioned.sku_description,
        unioned.usage_type,
        unioned.operation,  -- noqa: RF04
        unioned.region,
        unioned.instance_type,
        unioned.usage_quantity,
        unioned.usage_unit,
        unioned.usage_hours,
        {{ convert_money('unioned.list_cost', 'unioned.exchange_rate') }} as list_cost,
        {{ convert_money('unioned.billed_cost', 'unioned.exchange_rate') }} as billed_cost,
        {{ convert_money('unioned.effective_cost', 'unioned.exchange_rate') }} as effective_cost,
        {{ convert_money('unioned.source_amortized_commitment_cost', 'unioned.exchange_rate') }}
            as amortized_commitment_cost,
        unioned.is_net_cost_fallback,
        unioned.counts_as_resource_cost,
        unioned.is_compute_instance_usage,
        unioned.is_data_transfer,
        unioned.is_split_cost_row,
        unioned.is_control_plane_fee,
        unioned.is_commitment_fee,
        {{ convert_money('unioned.cud_credit_amount', 'unioned.exchange_rate') }}
            as cud_credit_amount,
        -- A Google commitment fee that no CUD credit took up that day is wasted commitment.
        {{ convert_money(
            "case when unioned.provider = 'gcp' and unioned.is_commitment_fee then "
            ~ "unioned.effective_cost + unioned.source_amortized_commitment_cost "
            ~ "else unioned.commitment_waste_cost end",
            'unioned.exchange_rate'
        ) }} as commitment_waste_cost,
        unioned.billing_currency as currency,
        unioned.tags,
        unioned.loaded_at,
        unioned.currency as source_currency,
        unioned.exchange_rate,
        cast(unioned.list_cost as decimal(38, 10)) as source_list_cost,
        cast(unioned.billed_cost as decimal(38, 10)) as source_billed_cost,
        cast(unioned.effective_cost as decimal(38, 10)) as source_effective_cost
    from converted as unioned
)

select * from final
