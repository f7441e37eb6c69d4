{#- Every cloud bill line of every format in one billing-line shape: the AWS (both CUR
    formats), Google Cloud, Azure and FOCUS staging models unioned by column name, plus the
    Google Cloud commitment fee spread as `amortized_commitment_cost` and the unspread part of
    Google commitment fees as commitment waste. One row per source billing line. -#}

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
        unioned.list_cost,
        unioned.billed_cost,
        unioned.effective_cost,
        cast(
            coalesce(commitment_fees_spread.amortized_commitment_cost, 0) as decimal(38, 10)
        ) as amortized_commitment_cost,
        unioned.is_net_cost_fallback,
        unioned.counts_as_resource_cost,
        unioned.is_compute_instance_usage,
        unioned.is_data_transfer,
        unioned.is_split_cost_row,
        unioned.is_control_plane_fee,
        unioned.is_commitment_fee,
        unioned.cud_credit_amount,
        -- A Google commitment fee that no CUD credit took up that day is wasted commitment.
        cast(
            case
                when unioned.provider = 'gcp' and unioned.is_commitment_fee
                    then
                        unioned.effective_cost
                        + coalesce(commitment_fees_spread.amortized_commitment_cost, 0)
                else unioned.commitment_waste_cost
            end as decimal(38, 10)
        ) as commitment_waste_cost,
        unioned.currency,
        unioned.tags,
        unioned.loaded_at
    from unioned
    left join commitment_fees_spread
        on unioned.billing_line_id = commitment_fees_spread.billing_line_id
)

select * from final
