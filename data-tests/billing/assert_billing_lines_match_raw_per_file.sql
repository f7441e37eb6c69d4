-- Per source file, fct_billing_lines has exactly the raw table's lines and the same money:
-- line count, billed cost (AWS unblended, Google cost + credits, Azure cost, FOCUS BilledCost)
-- and effective cost computed here from the raw rows by SPEC §3.2's rules — written out in this
-- test, not with the billing_aws_effective_cost macro the staging models use, so a mistake in
-- that macro shows (Google cost + credits, the commitment spread living in its own column;
-- Azure the cost column; FOCUS EffectiveCost), all compared with `=` in the source currency
-- (source_billed_cost, source_effective_cost). Returns the files that differ.
{# SPEC §3.2, AWS, per line item type: the net figure, else the non-net one. Usage, Tax,
    Credit, Refund, other fees: (net) unblended; DiscountedUsage: reservation effective cost;
    SavingsPlanCoveredUsage: savings-plan effective cost; negations, upfront fees, discounts
    and reservation upfront Fee rows: 0; RIFee: the unused amortized upfront + unused
    recurring fee, else the fee less what the reservation's covered usage carries that period;
    SavingsPlanRecurringFee: the unused commitment (total - used, net of discounts in the
    line's net/unblended ratio), else the fee less what the plan's covered usage carries. -#}
{%- set aws_expected_effective_cost -%}
    case
        when line_item_type = 'DiscountedUsage'
            then coalesce(reservation_effective, net_or_unblended)
        when line_item_type = 'SavingsPlanCoveredUsage'
            then coalesce(savings_plan_effective, net_or_unblended)
        when line_item_type in ('SavingsPlanNegation', 'SavingsPlanUpfrontFee') then 0
        when line_item_type like '%Discount' then 0
        when line_item_type = 'Fee' and reservation_arn is not null then 0
        when line_item_type = 'RIFee' and reservation_unused is not null
            then reservation_unused
        when line_item_type = 'RIFee'
            then net_or_unblended - coalesce(reservation_covered_effective_cost, 0)
        when line_item_type = 'SavingsPlanRecurringFee'
            and savings_plan_total_commitment is not null
            and savings_plan_used_commitment is not null
            then (savings_plan_total_commitment - savings_plan_used_commitment)
            * case
                when net_unblended_cost is not null and unblended_cost != 0
                    then net_unblended_cost / unblended_cost
                else 1
            end
        when line_item_type = 'SavingsPlanRecurringFee'
            then net_or_unblended - coalesce(savings_plan_covered_effective_cost, 0)
        else net_or_unblended
    end
{%- endset -%}
{# The figures the rules pick from, net first. #}
{%- set aws_figures -%}
        coalesce(net_unblended_cost, unblended_cost) as net_or_unblended,
        coalesce(reservation_net_effective_cost, reservation_effective_cost)
            as reservation_effective,
        coalesce(savings_plan_net_effective_cost, savings_plan_effective_cost)
            as savings_plan_effective,
        case
            when
                reservation_net_unused_amortized_upfront_fee is not null
                or reservation_net_unused_recurring_fee is not null
                then coalesce(reservation_net_unused_amortized_upfront_fee, 0)
                + coalesce(reservation_net_unused_recurring_fee, 0)
            when
                reservation_unused_amortized_upfront_fee is not null
                or reservation_unused_recurring_fee is not null
                then coalesce(reservation_unused_amortized_upfront_fee, 0)
                + coalesce(reservation_unused_recurring_fee, 0)
        end as reservation_unused
{%- endset %}
with

raw_aws_cur2 as (
    select
        _source_file,
        {{- billing_raw_select_list('aws', 'cur2', [
            ('line_item_line_item_type', 'line_item_type'),
            ('reservation_reservation_a_r_n', 'reservation_arn'),
            ('savings_plan_savings_plan_a_r_n', 'savings_plan_arn'),
            ('line_item_usage_start_date', 'charge_period_start'),
            ('line_item_unblended_cost', 'unblended_cost'),
            ('line_item_net_unblended_cost', 'net_unblended_cost'),
            ('reservation_effective_cost', 'reservation_effective_cost'),
            ('reservation_net_effective_cost', 'reservation_net_effective_cost'),
            (
                'reservation_unused_amortized_upfront_fee_for_billing_period',
                'reservation_unused_amortized_upfront_fee',
            ),
            (
                'reservation_net_unused_amortized_upfront_fee_for_billing_period',
                'reservation_net_unused_amortized_upfront_fee',
            ),
            ('reservation_unused_recurring_fee', 'reservation_unused_recurring_fee'),
            ('reservation_net_unused_recurring_fee', 'reservation_net_unused_recurring_fee'),
            ('savings_plan_savings_plan_effective_cost', 'savings_plan_effective_cost'),
            ('savings_plan_net_savings_plan_effective_cost', 'savings_plan_net_effective_cost'),
            ('savings_plan_total_commitment_to_date', 'savings_plan_total_commitment'),
            ('savings_plan_used_commitment', 'savings_plan_used_commitment'),
        ]) }}
    from {{ source('aws', 'cur2') }}
    where _superseded_at is null  -- kept only for the seals that reference them
),

typed_aws_cur2 as (
    select
        _source_file,
        line_item_type,
        reservation_arn,
        savings_plan_arn,
        charge_period_start,
        {{ billing_to_amount('unblended_cost') }} as unblended_cost,
        {{ billing_to_amount('net_unblended_cost') }} as net_unblended_cost,
        {{ billing_to_amount('reservation_effective_cost') }} as reservation_effective_cost,
        {{ billing_to_amount('reservation_net_effective_cost') }} as reservation_net_effective_cost,
        {{ billing_to_amount('reservation_unused_amortized_upfront_fee') }}
            as reservation_unused_amortized_upfront_fee,
        {{ billing_to_amount('reservation_net_unused_amortized_upfront_fee') }}
            as reservation_net_unused_amortized_upfront_fee,
        {{ billing_to_amount('reservation_unused_recurring_fee') }}
            as reservation_unused_recurring_fee,
        {{ billing_to_amount('reservation_net_unused_recurring_fee') }}
            as reservation_net_unused_recurring_fee,
        {{ billing_to_amount('savings_plan_effective_cost') }} as savings_plan_effective_cost,
        {{ billing_to_amount('savings_plan_net_effective_cost') }}
            as savings_plan_net_effective_cost,
        {{ billing_to_amount('savings_plan_total_commitment') }} as savings_plan_total_commitment,
        {{ billing_to_amount('savings_plan_used_commitment') }} as savings_plan_used_commitment
    from raw_aws_cur2
),

covered_aws_cur2 as (
    select
        *,
        sum(
            case
                when line_item_type = 'SavingsPlanCoveredUsage'
                    then coalesce(savings_plan_net_effective_cost, savings_plan_effective_cost)
            end
        ) over (partition by savings_plan_arn, charge_period_start)
            as savings_plan_covered_effective_cost,
        sum(
            case
                when line_item_type = 'DiscountedUsage'
                    then coalesce(reservation_net_effective_cost, reservation_effective_cost)
            end
        ) over (partition by reservation_arn, charge_period_start)
            as reservation_covered_effective_cost
    from typed_aws_cur2
),

figures_aws_cur2 as (
    select
        *,
        {{ aws_figures }}
    from covered_aws_cur2
),

files_aws_cur2 as (
    select
        'aws_cur2' as source_format,
        _source_file as source_file,
        count(*) as line_count,
        sum(cast(unblended_cost as decimal(38, 10))) as billed_cost,
        sum(cast({{ aws_expected_effective_cost }} as decimal(38, 10))) as effective_cost
    from figures_aws_cur2
    group by _source_file
),

raw_aws_cur_legacy as (
    select
        _source_file,
        {{- billing_raw_select_list('aws', 'cur_legacy', [
            ('lineItem/LineItemType', 'line_item_type'),
            ('reservation/ReservationARN', 'reservation_arn'),
            ('savingsPlan/SavingsPlanARN', 'savings_plan_arn'),
            ('lineItem/UsageStartDate', 'charge_period_start'),
            ('lineItem/UnblendedCost', 'unblended_cost'),
            ('lineItem/NetUnblendedCost', 'net_unblended_cost'),
            ('reservation/EffectiveCost', 'reservation_effective_cost'),
            ('reservation/NetEffectiveCost', 'reservation_net_effective_cost'),
            (
                'reservation/UnusedAmortizedUpfrontFeeForBillingPeriod',
                'reservation_unused_amortized_upfront_fee',
            ),
            (
                'reservation/NetUnusedAmortizedUpfrontFeeForBillingPeriod',
                'reservation_net_unused_amortized_upfront_fee',
            ),
            ('reservation/UnusedRecurringFee', 'reservation_unused_recurring_fee'),
            ('reservation/NetUnusedRecurringFee', 'reservation_net_unused_recurring_fee'),
            ('savingsPlan/SavingsPlanEffectiveCost', 'savings_plan_effective_cost'),
            ('savingsPlan/NetSavingsPlanEffectiveCost', 'savings_plan_net_effective_cost'),
            ('savingsPlan/TotalCommitmentToDate', 'savings_plan_total_commitment'),
            ('savingsPlan/UsedCommitment', 'savings_plan_used_commitment'),
        ]) }}
    from {{ source('aws', 'cur_legacy') }}
    where _superseded_at is null  -- kept only for the seals that reference them
),

typed_aws_cur_legacy as (
    select
        _source_file,
        line_item_type,
        reservation_arn,
        savings_plan_arn,
        charge_period_start,
        {{ billing_to_amount('unblended_cost') }} as unblended_cost,
        {{ billing_to_amount('net_unblended_cost') }} as net_unblended_cost,
        {{ billing_to_amount('reservation_effective_cost') }} as reservation_effective_cost,
        {{ billing_to_amount('reservation_net_effective_cost') }} as reservation_net_effective_cost,
        {{ billing_to_amount('reservation_unused_amortized_upfront_fee') }}
            as reservation_unused_amortized_upfront_fee,
        {{ billing_to_amount('reservation_net_unused_amortized_upfront_fee') }}
            as reservation_net_unused_amortized_upfront_fee,
        {{ billing_to_amount('reservation_unused_recurring_fee') }}
            as reservation_unused_recurring_fee,
        {{ billing_to_amount('reservation_net_unused_recurring_fee') }}
            as reservation_net_unused_recurring_fee,
        {{ billing_to_amount('savings_plan_effective_cost') }} as savings_plan_effective_cost,
        {{ billing_to_amount('savings_plan_net_effective_cost') }}
            as savings_plan_net_effective_cost,
        {{ billing_to_amount('savings_plan_total_commitment') }} as savings_plan_total_commitment,
        {{ billing_to_amount('savings_plan_used_commitment') }} as savings_plan_used_commitment
    from raw_aws_cur_legacy
),

covered_aws_cur_legacy as (
    select
        *,
        sum(
            case
                when line_item_type = 'SavingsPlanCoveredUsage'
                    then coalesce(savings_plan_net_effective_cost, savings_plan_effective_cost)
            end
        ) over (partition by savings_plan_arn, charge_period_start)
            as savings_plan_covered_effective_cost,
        sum(
            case
                when line_item_type = 'DiscountedUsage'
                    then coalesce(reservation_net_effective_cost, reservation_effective_cost)
            end
        ) over (partition by reservation_arn, charge_period_start)
            as reservation_covered_effective_cost
    from typed_aws_cur_legacy
),

figures_aws_cur_legacy as (
    select
        *,
        {{ aws_figures }}
    from covered_aws_cur_legacy
),

files_aws_cur_legacy as (
    select
        'aws_cur_legacy' as source_format,
        _source_file as source_file,
        count(*) as line_count,
        sum(cast(unblended_cost as decimal(38, 10))) as billed_cost,
        sum(cast({{ aws_expected_effective_cost }} as decimal(38, 10))) as effective_cost
    from figures_aws_cur_legacy
    group by _source_file
),

raw_gcp as (
    select
        _source_file,
        {{- billing_raw_select_list('gcp', 'billing_export', [
            ('cost', 'gcp_cost'), ('credits', 'credits'),
        ]) }}
    from {{ source('gcp', 'billing_export') }}
    where _superseded_at is null  -- kept only for the seals that reference them
),

files_gcp as (
    select
        'gcp_detailed' as source_format,
        _source_file as source_file,
        count(*) as line_count,
        sum({{ billing_to_amount('gcp_cost') }} + {{ billing_json_array_sum('credits') }})
            as billed_cost,
        sum({{ billing_to_amount('gcp_cost') }} + {{ billing_json_array_sum('credits') }})
            as effective_cost
    from raw_gcp
    group by _source_file
),

raw_azure as (
    select
        _source_file,
        {{- billing_raw_select_list('azure', 'cost_details', [
            ('CostInBillingCurrency', 'cost_in_billing_currency'), ('Cost', 'ea_cost'),
        ]) }}
    from {{ source('azure', 'cost_details') }}
    where _superseded_at is null  -- kept only for the seals that reference them
),

files_azure as (
    select
        'azure_amortized' as source_format,
        _source_file as source_file,
        count(*) as line_count,
        sum(
            coalesce(
                {{ billing_to_amount('cost_in_billing_currency') }},
                {{ billing_to_amount('ea_cost') }}
            )
        ) as billed_cost,
        sum(
            coalesce(
                {{ billing_to_amount('cost_in_billing_currency') }},
                {{ billing_to_amount('ea_cost') }}
            )
        ) as effective_cost
    from raw_azure
    group by _source_file
),

raw_focus as (
    select
        _source_file,
        {{- billing_raw_select_list('focus', 'billing', [
            ('BilledCost', 'billed_cost'), ('EffectiveCost', 'effective_cost'),
        ]) }}
    from {{ source('focus', 'billing') }}
    where _superseded_at is null  -- kept only for the seals that reference them
),

files_focus as (
    select
        'focus' as source_format,
        _source_file as source_file,
        count(*) as line_count,
        sum({{ billing_to_amount('billed_cost') }}) as billed_cost,
        sum({{ billing_to_amount('effective_cost') }}) as effective_cost
    from raw_focus
    group by _source_file
),

raw_files as (
    select * from files_aws_cur2
    union all
    select * from files_aws_cur_legacy
    union all
    select * from files_gcp
    union all
    select * from files_azure
    union all
    select * from files_focus
),

billed_files as (
    select
        source_format,
        source_file,
        count(*) as line_count,
        -- the raw rows' own currency: before any exchange-rate conversion (SPEC §3.3)
        sum(source_billed_cost) as billed_cost,
        sum(source_effective_cost) as effective_cost
    from {{ ref('fct_billing_lines') }}
    group by source_format, source_file
),

final as (
    select
        coalesce(raw_files.source_format, billed_files.source_format) as source_format,
        coalesce(raw_files.source_file, billed_files.source_file) as source_file,
        raw_files.line_count as raw_line_count,
        billed_files.line_count as billed_line_count,
        raw_files.billed_cost as raw_billed_cost,
        billed_files.billed_cost as fct_billed_cost,
        raw_files.effective_cost as raw_effective_cost,
        billed_files.effective_cost as fct_effective_cost
    from raw_files
    full outer join billed_files
        on
            raw_files.source_format = billed_files.source_format
            and raw_files.source_file = billed_files.source_file
    where
        raw_files.source_file is null
        or billed_files.source_file is null
        or raw_files.line_count != billed_files.line_count
        or raw_files.billed_cost != billed_files.billed_cost
        or raw_files.effective_cost != billed_files.effective_cost
)

select * from final
