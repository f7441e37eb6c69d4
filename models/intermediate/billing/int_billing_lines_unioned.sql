{#- Every cloud bill line of every format in one billing-line shape: the AWS (both CUR
    formats), Google Cloud, Azure and FOCUS staging models unioned, plus the Google Cloud
    commitment fee spread as `amortized_commitment_cost`. One row per source billing line. -#}
{%- set staged_models = [
    'stg_aws__cur_legacy_billing_lines',
    'stg_aws__cur2_billing_lines',
    'stg_gcp__billing_lines',
    'stg_azure__billing_lines',
    'stg_focus__billing_lines',
] -%}

with

{% for model_name in staged_models %}
{{ model_name }} as (
    select
        {%- for column_name in billing_line_columns() %}
        {{ column_name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ ref(model_name) }}
),

{% endfor -%}
commitment_fees_spread as (
    select
        billing_line_id,
        amortized_commitment_cost
    from {{ ref('int_gcp_commitment_fees_spread') }}
),

unioned as (
    {% for model_name in staged_models -%}
    select * from {{ model_name }}
    {% if not loop.last %}union all
    {% endif -%}
    {%- endfor %}
),

final as (
    select
        {%- for column_name in billing_line_columns() %}
        {%- if column_name == 'commitment_waste_cost' %}
        -- A Google commitment fee that no CUD credit that day took up is wasted commitment.
        cast(
            case
                when unioned.provider = 'gcp' and unioned.is_commitment_fee
                    then unioned.effective_cost
                    + coalesce(commitment_fees_spread.amortized_commitment_cost, 0)
                else unioned.commitment_waste_cost
            end as decimal(38, 10)
        ) as commitment_waste_cost,
        {%- elif column_name == 'effective_cost' %}
        unioned.effective_cost,
        cast(
            coalesce(commitment_fees_spread.amortized_commitment_cost, 0) as decimal(38, 10)
        ) as amortized_commitment_cost,
        {%- else %}
        unioned.{{ column_name }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from unioned
    left join commitment_fees_spread
        on unioned.billing_line_id = commitment_fees_spread.billing_line_id
)

select * from final
