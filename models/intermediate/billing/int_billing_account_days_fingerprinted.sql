{#- One row per billing account and UTC charge day: a fingerprint of that day's billing lines
    (SPEC §9's first rule). The orchestration stores it when it allocates a day
    (ops.allocated_billing_fingerprints); a day whose fingerprint differs from the one stored
    (its lines were restated, arrived late, or were taken away) is allocated again before
    anything reads it. Built before every range build, alone with its inputs. -#}

with

billing_lines as (
    select
        provider,
        coalesce(billing_account_id, '') as billing_account_id,
        charge_date,
        sub_account_id,
        charge_period_end,
        resource_key,
        resource_type,
        charge_category,
        pricing_category,
        instance_type,
        region,
        usage_hours,
        effective_cost,
        amortized_commitment_cost,
        counts_as_resource_cost,
        is_compute_instance_usage,
        is_data_transfer,
        is_control_plane_fee,
        tags
    from {{ ref('int_billing_lines_unioned') }}
    where charge_date is not null
),

-- One text per line, from what the allocation reads of it (not its ID: a restated export
-- that repeats a day's lines unchanged leaves the day as it is).
{%- set parts = [
    'sub_account_id', 'charge_period_end', 'resource_key', 'resource_type', 'charge_category',
    'pricing_category', 'instance_type', 'region', 'usage_hours', 'effective_cost',
    'amortized_commitment_cost', 'counts_as_resource_cost', 'is_compute_instance_usage',
    'is_data_transfer', 'is_control_plane_fee', 'tags',
] %}
{%- set texts = [] %}
{%- for part in parts %}
    {%- if not loop.first %}{%- do texts.append("'|'") %}{%- endif %}
    {%- do texts.append("coalesce(cast(" ~ part ~ " as " ~ dbt.type_string() ~ "), '')") %}
{%- endfor %}
line_texts as (
    select
        provider,
        billing_account_id,
        charge_date,
        {{ dbt.concat(texts) }} as line_text
    from billing_lines
),

final as (
    select
        provider,
        billing_account_id,
        charge_date,
        count(*) as billing_line_count,
        {{ dbt.hash(dbt.listagg('line_text', "';'", 'order by line_text')) }}
            as billing_fingerprint
    from line_texts
    group by
        provider,
        billing_account_id,
        charge_date
)

select * from final
