{{ config(tags=['close']) }}

-- SPEC §9: a slice billed on its estimate (no billing link, a negative invoice, an empty slice
-- or a factor out of bounds) has target = its estimate rounded to the minor unit, and each of
-- its lines is billed at its own estimate (factor 1: within the rounding, less than 1.5 units
-- — half a unit from rounding the total plus under one from rounding down, or one carried); a
-- slice that should be on its estimate is; and a reconciled slice with every day complete has
-- target = its invoice slice. Returns the slices (and lines) that break any of these.
with

targets as (
    select
        bill_month,
        cluster_id,
        cost_family,
        bill_slice_id,
        link_state,
        reason,
        basis,
        is_reconciled,
        days_missing,
        estimated_cost,
        invoice_cost,
        target_cost,
        minor_unit_digits
    from {{ ref('int_bill_targets_monthly') }}
),

lines as (
    select
        bill_month,
        cluster_id,
        cost_family,
        line_id,
        allocation_estimate,
        billed_cost
    from {{ ref('int_bill_lines_allocated') }}
),

slice_problems as (
    select
        bill_slice_id,
        cast(null as {{ dbt.type_string() }}) as line_id,
        case
            when
                basis = 'estimate'
                and target_cost
                != {{ round_to_minor_unit('estimated_cost', 'minor_unit_digits') }}
                then 'estimate basis not billed at its estimate'
            when
                basis != 'estimate'
                and (
                    link_state in ('no_link', 'negative_invoice')
                    or reason in ('empty_slice', 'factor_out_of_bounds')
                )
                then 'should be billed on its estimate'
            when
                is_reconciled
                and days_missing = 0
                and target_cost != coalesce(invoice_cost, 0)
                then 'reconciled but not billed at its invoice'
        end as problem
    from targets
),

line_problems as (
    select
        targets.bill_slice_id,
        lines.line_id,
        'estimate-basis line not billed at its estimate' as problem
    from lines
    inner join targets
        on
            lines.bill_month = targets.bill_month
            and lines.cluster_id = targets.cluster_id
            and lines.cost_family = targets.cost_family
    where
        targets.basis = 'estimate'
        and abs(
            lines.billed_cost
            - case
                when lines.allocation_estimate > 0 then lines.allocation_estimate
                else 0
            end
        ) >= 1.5 * {{ minor_unit_size('targets.minor_unit_digits') }}
),

final as (
    select * from slice_problems
    where problem is not null
    union all
    select * from line_problems
)

select * from final
