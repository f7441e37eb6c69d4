{{ config(**incremental_by_period('month_start_date')) }}

-- One row per month, cluster and cost family: what the bill must sum to (its target), why,
-- and whether the slice can be closed (SPEC §9). The decision, in order:
--   no billing link             -> the estimate, factor 1.0, not reconciled
--   link selects no line        -> blocked `empty_slice` when there is an estimate
--   factor outside the bounds   -> blocked `factor_out_of_bounds` (target and estimate > 0)
--   a day not complete          -> blocked `incomplete_days`
--   negative invoice slice      -> the estimate, anomaly `negative_invoice`
--   otherwise                   -> the invoice slice (0 gives factor 0), reconciled
-- Blocked slices carry their fallback: the estimate (or, for days not complete, the invoice
-- on the complete days plus the estimate on the others). From the deadline on (month end +
-- deadline_days, as of var `as_of`) that fallback is what seals: status `estimated_fallback`.
with

line_estimates as (
    select
        month_start_date,
        cluster_id,
        cost_family,
        estimated_cost
    from {{ ref('int_bill_estimates_monthly') }}
    where {{ close_month_filter('month_start_date') }}
),

billing_lines as (
    select
        billing_line_id,
        cluster_id,
        charge_date,
        cost_family,
        effective_cost
    from {{ ref('int_billing_lines_scoped') }}
    where {{ close_month_filter('charge_date') }}
),

owner_costs as (
    select
        cluster_id,
        usage_date,
        cost_family,
        total_cost
    from {{ ref('fct_owner_costs_daily') }}
    where {{ close_month_filter('usage_date') }}
),

reconciliation as (
    select
        cluster_id,
        usage_date,
        is_complete,
        coalesce(is_awaiting_usage, false) as is_awaiting_usage
    from {{ ref('fct_reconciliation_daily') }}
    where {{ close_month_filter('usage_date') }}
),

clusters as (
    select
        cluster_id,
        has_billing_link,
        currency
    from {{ ref('stg_config__clusters') }}
),

-- Digits of each currency's minor unit, from Babel (SPEC §1.2: JPY 0, USD 2, KWD 3): every
-- bill amount is rounded to its currency's unit.
minor_units as (
    select
        currency,
        minor_unit_digits
    from {{ ref('currency_minor_units') }}
),

settings as (
    select
        grace_days,
        deadline_days,
        coalesce(repair_window_days, 7) as repair_window_days,
        factor_min,
        factor_max,
        unassigned_policy,
        currency
    from {{ ref('stg_config__settings') }}
),

-- The estimated total of a slice is the sum of its lines' estimates as the allocation sees
-- them: a negative line estimate counts as 0 (see allocate_cents).
estimate_totals as (
    select
        month_start_date,
        cluster_id,
        cost_family,
        sum(
            case when estimated_cost > 0 then estimated_cost else cast(0 as decimal(38, 6)) end
        ) as estimated_cost
    from line_estimates
    group by
        month_start_date,
        cluster_id,
        cost_family
),

invoice_days as (
    select
        cluster_id,
        cost_family,
        charge_date as cost_date,
        sum(effective_cost) as invoice_cost,
        count(distinct billing_line_id) as billing_line_count
    from billing_lines
    group by
        cluster_id,
        cost_family,
        charge_date
),

estimate_days as (
    select
        cluster_id,
        cost_family,
        usage_date as cost_date,
        sum(cast(total_cost as decimal(38, 12))) as estimated_cost
    from owner_costs
    group by
        cluster_id,
        cost_family,
        usage_date
),

family_days as (
    select
        coalesce(invoice_days.cluster_id, estimate_days.cluster_id) as cluster_id,
        coalesce(invoice_days.cost_family, estimate_days.cost_family) as cost_family,
        coalesce(invoice_days.cost_date, estimate_days.cost_date) as cost_date,
        coalesce(invoice_days.invoice_cost, 0) as invoice_cost,
        coalesce(invoice_days.billing_line_count, 0) as billing_line_count,
        coalesce(estimate_days.estimated_cost, 0) as estimated_cost
    from invoice_days
    full outer join estimate_days
        on
            invoice_days.cluster_id = estimate_days.cluster_id
            and invoice_days.cost_family = estimate_days.cost_family
            and invoice_days.cost_date = estimate_days.cost_date
),

-- A cluster's month runs from its first to its last day with evidence in that month (a
-- reconciliation row, ledger cost or a billing line), not over the calendar (SPEC §4). A day
-- of that span is complete when the reconciliation says so; when it has no row at all (no
-- usage, no in-scope billing: a cluster scaled to zero) there is nothing to allocate and it
-- is complete; a day with billing but no usage is pending through the repair window (as of
-- the close date) and complete after it, its lines unallocated with reason `no_usage`.
evidence_days as (
    select
        cluster_id,
        usage_date as evidence_date
    from reconciliation
    union
    select
        cluster_id,
        cost_date as evidence_date
    from family_days
),

cluster_month_spans as (
    select
        cluster_id,
        cast({{ dbt.date_trunc('month', 'evidence_date') }} as date) as month_start_date,
        min(evidence_date) as first_date,
        max(evidence_date) as last_date
    from evidence_days
    group by
        cluster_id,
        cast({{ dbt.date_trunc('month', 'evidence_date') }} as date)
),

day_offsets as (
    select generated_number - 1 as day_offset
    from ({{ dbt.generate_series(31) }}) as series
),

calendar as (
    select
        cluster_month_spans.cluster_id,
        cluster_month_spans.month_start_date,
        cast(
            {{ dbt.dateadd(
                'day', 'day_offsets.day_offset', 'cluster_month_spans.first_date'
            ) }} as date
        ) as calendar_date,
        cluster_month_spans.last_date
    from cluster_month_spans
    cross join day_offsets
),

due_days as (
    select
        calendar.cluster_id,
        calendar.month_start_date,
        calendar.calendar_date,
        case
            when reconciliation.usage_date is null then true
            when reconciliation.is_awaiting_usage
                then {{ dbt.datediff(
                    'calendar.calendar_date', close_as_of_date(), 'day'
                ) }} > settings.repair_window_days
            else coalesce(reconciliation.is_complete, false)
        end as is_complete
    from calendar
    cross join settings
    left join reconciliation
        on
            calendar.cluster_id = reconciliation.cluster_id
            and calendar.calendar_date = reconciliation.usage_date
    where calendar.calendar_date <= calendar.last_date
),

missing_day_lists as (
    select
        cluster_id,
        month_start_date,
        {{ dbt.listagg(
            'cast(calendar_date as ' ~ dbt.type_string() ~ ')',
            "', '",
            'order by calendar_date',
        ) }} as missing_dates
    from due_days
    where not is_complete
    group by
        cluster_id,
        month_start_date
),

completeness as (
    select
        due_days.cluster_id,
        due_days.month_start_date,
        count(*) as days_due,
        sum(case when due_days.is_complete then 0 else 1 end) as days_missing,
        min(case when not due_days.is_complete then due_days.calendar_date end)
            as first_missing_date
    from due_days
    group by
        due_days.cluster_id,
        due_days.month_start_date
),

family_months as (
    select
        family_days.cluster_id,
        family_days.cost_family,
        cast({{ dbt.date_trunc('month', 'family_days.cost_date') }} as date) as month_start_date,
        sum(family_days.invoice_cost) as invoice_cost,
        sum(family_days.billing_line_count) as billing_line_count,
        sum(
            case when due_days.is_complete then family_days.invoice_cost else 0 end
        ) as invoice_on_complete_days_cost,
        sum(
            case
                when due_days.is_complete then cast(0 as decimal(38, 12))
                else family_days.estimated_cost
            end
        ) as estimated_on_missing_days_cost
    from family_days
    left join due_days
        on
            family_days.cluster_id = due_days.cluster_id
            and family_days.cost_date = due_days.calendar_date
    group by
        family_days.cluster_id,
        family_days.cost_family,
        cast({{ dbt.date_trunc('month', 'family_days.cost_date') }} as date)
),

slices as (
    select
        coalesce(estimate_totals.month_start_date, family_months.month_start_date)
            as month_start_date,
        coalesce(estimate_totals.cluster_id, family_months.cluster_id) as cluster_id,
        coalesce(estimate_totals.cost_family, family_months.cost_family) as cost_family,
        coalesce(estimate_totals.estimated_cost, cast(0 as decimal(38, 6))) as estimated_cost,
        family_months.invoice_cost,
        coalesce(family_months.billing_line_count, 0) as billing_line_count,
        family_months.invoice_on_complete_days_cost,
        family_months.estimated_on_missing_days_cost
    from estimate_totals
    full outer join family_months
        on
            estimate_totals.month_start_date = family_months.month_start_date
            and estimate_totals.cluster_id = family_months.cluster_id
            and estimate_totals.cost_family = family_months.cost_family
),

figures as (
    select
        slices.month_start_date,
        cast(
            {{ dbt.dateadd('day', -1, dbt.dateadd('month', 1, 'slices.month_start_date')) }}
            as date
        ) as month_end_date,
        slices.cluster_id,
        slices.cost_family,
        coalesce(clusters.has_billing_link, false) as has_billing_link,
        coalesce(clusters.currency, settings.currency) as currency,
        settings.unassigned_policy,
        settings.grace_days,
        settings.deadline_days,
        cast(settings.factor_min as decimal(38, 10)) as factor_min,
        cast(settings.factor_max as decimal(38, 10)) as factor_max,
        slices.estimated_cost,
        minor_units.minor_unit_digits,
        {{ round_to_minor_unit('slices.estimated_cost', 'minor_units.minor_unit_digits') }}
            as estimate_target_cost,
        case
            when slices.billing_line_count > 0
                then {{ round_to_minor_unit(
                    'slices.invoice_cost', 'minor_units.minor_unit_digits'
                ) }}
        end as invoice_cost,
        cast(slices.billing_line_count as integer) as billing_line_count,
        cast(coalesce(completeness.days_due, 0) as integer) as days_due,
        cast(coalesce(completeness.days_missing, 0) as integer) as days_missing,
        completeness.first_missing_date,
        missing_day_lists.missing_dates,
        -- What the invoice says the slice costs, exact: the invoice slice, or, while days
        -- are not complete, the invoice on the complete days plus the estimate on the others
        -- (their bill lines may be missing or still restating).
        case
            when slices.billing_line_count = 0 then null
            when coalesce(completeness.days_missing, 0) = 0 then slices.invoice_cost
            else
                coalesce(slices.invoice_on_complete_days_cost, 0)
                + case
                    when slices.estimated_on_missing_days_cost > 0
                        then slices.estimated_on_missing_days_cost
                    else 0
                end
        end as invoice_target_exact_cost
    from slices
    cross join settings
    left join clusters
        on slices.cluster_id = clusters.cluster_id
    left join minor_units
        on coalesce(clusters.currency, settings.currency) = minor_units.currency
    left join completeness
        on
            slices.cluster_id = completeness.cluster_id
            and slices.month_start_date = completeness.month_start_date
    left join missing_day_lists
        on
            slices.cluster_id = missing_day_lists.cluster_id
            and slices.month_start_date = missing_day_lists.month_start_date
),

rounded as (
    select
        figures.*,
        -- in the currency's minor unit; whether the slice is negative is decided on the exact
        -- amount (-0.3 yen is a negative slice, treated as no invoice, not a zero invoice)
        {{ round_to_minor_unit(
            'figures.invoice_target_exact_cost', 'figures.minor_unit_digits'
        ) }} as invoice_target_cost
    from figures
),

dated as (
    select
        rounded.*,
        {{ close_as_of_date() }} as as_of_date,
        cast(
            {{ dbt.dateadd('day', 'rounded.grace_days', 'rounded.month_end_date') }} as date
        ) as closable_from_date,
        cast(
            {{ dbt.dateadd('day', 'rounded.deadline_days', 'rounded.month_end_date') }} as date
        ) as deadline_date,
        case
            when not rounded.has_billing_link then 'no_link'
            when rounded.billing_line_count = 0 then 'empty_slice'
            when rounded.invoice_target_exact_cost < 0 then 'negative_invoice'
            else 'linked'
        end as link_state,
        case
            when
                rounded.has_billing_link
                and rounded.billing_line_count > 0
                and rounded.invoice_target_cost > 0
                and rounded.estimated_cost > 0
                then {{ decimal_divide('rounded.invoice_target_cost', 'rounded.estimated_cost') }}
        end as invoice_factor
    from rounded
),

decided as (
    select
        dated.*,
        dated.as_of_date >= dated.deadline_date as is_past_deadline,
        case
            when dated.link_state = 'empty_slice' and dated.estimated_cost > 0
                then 'empty_slice'
            when
                dated.link_state = 'linked'
                and (
                    dated.invoice_factor < dated.factor_min
                    or dated.invoice_factor > dated.factor_max
                )
                then 'factor_out_of_bounds'
            when dated.days_missing > 0 then 'incomplete_days'
        end as block_reason
    from dated
),

based as (
    select
        decided.*,
        case
            when decided.link_state in ('no_link', 'negative_invoice') then 'estimate'
            when decided.block_reason in ('empty_slice', 'factor_out_of_bounds') then 'estimate'
            when decided.link_state = 'empty_slice' then 'invoice'
            when decided.days_missing > 0 then 'invoice_and_estimate'
            else 'invoice'
        end as basis
    from decided
),

targeted as (
    select
        based.*,
        case
            when based.basis = 'estimate' then based.estimate_target_cost
            else coalesce(based.invoice_target_cost, cast(0 as decimal(38, 3)))
        end as target_cost
    from based
),

factored as (
    select
        targeted.*,
        case
            when targeted.basis = 'estimate' then cast(1 as decimal(38, 10))
            when targeted.estimated_cost > 0
                -- shown at its 10 places rounded half up; the bill lines are apportioned
                -- from target and estimate (allocate_cents), never from this figure
                then {{ decimal_divide(
                    'targeted.target_cost', 'targeted.estimated_cost', rounding='half_up'
                ) }}
        end as factor
    from targeted
),

final as (
    select
        {{ dbt.concat([year_month('month_start_date'), "'|'", 'cluster_id', "'|'",
            'cost_family']) }} as bill_slice_id,
        {{ year_month('month_start_date') }} as bill_month,
        month_start_date,
        month_end_date,
        cluster_id,
        cost_family,
        currency,
        minor_unit_digits,
        has_billing_link,
        link_state,
        billing_line_count,
        invoice_cost,
        estimated_cost,
        target_cost,
        basis,
        basis = 'invoice' as is_reconciled,
        factor,
        invoice_factor,
        factor_min,
        factor_max,
        case
            when basis = 'invoice' and estimated_cost > 0 then factor - 1
        end as factor_drift,
        coalesce(
            basis = 'invoice'
            and estimated_cost > 0
            and (
                target_cost > estimated_cost * cast(1.005 as decimal(38, 3))
                or target_cost < estimated_cost * cast(0.995 as decimal(38, 3))
            ),
            false
        ) as has_factor_drift,
        case
            when block_reason is null then 'ready'
            when is_past_deadline then 'estimated_fallback'
            else 'blocked'
        end as close_status,
        coalesce(
            block_reason,
            case
                when link_state = 'no_link' then 'no_billing_link'
                when link_state = 'negative_invoice' then 'negative_invoice'
            end
        ) as reason,
        case
            when link_state = 'negative_invoice' then 'negative_invoice'
            when
                basis = 'invoice' and target_cost > 0 and estimated_cost = 0
                then 'invoice_without_estimate'
        end as anomaly,
        days_due,
        days_missing,
        first_missing_date,
        missing_dates,
        unassigned_policy,
        as_of_date,
        closable_from_date,
        deadline_date,
        is_past_deadline
    from factored
)

select * from final
