{{ config(**incremental_by_period('month_start_date')) }}

-- One row per month, cluster, cost family and bill line: the line's exact share of the slice's
-- target and its billed amount in the currency's minor unit (cents, yen, fils), by
-- allocate_cents (SPEC §9, §1.2). The billed lines of a
-- slice sum to its target exactly; a slice always has an `__unassigned__` line, which takes
-- the whole invoice when nothing is attributed.
with

line_estimates as (
    select
        month_start_date,
        cluster_id,
        cost_family,
        line_key,
        line_id,
        is_unassigned,
        estimated_cost
    from {{ ref('int_bill_estimates_monthly') }}
    where {{ close_month_filter('month_start_date') }}
),

targets as (
    select
        bill_month,
        month_start_date,
        cluster_id,
        cost_family,
        target_cost,
        minor_unit_digits,
        factor,
        is_reconciled,
        basis,
        close_status,
        unassigned_policy
    from {{ ref('int_bill_targets_monthly') }}
    where {{ close_month_filter('month_start_date') }}
),

unassigned_fillers as (
    select
        targets.month_start_date,
        targets.cluster_id,
        targets.cost_family,
        '__unassigned__' as line_key,
        {{ dbt.concat(['targets.cluster_id', "'|'", 'targets.cost_family',
            "'|__unassigned__'"]) }} as line_id,
        true as is_unassigned,
        cast(0 as decimal(38, 6)) as estimated_cost
    from targets
    left join line_estimates
        on
            targets.month_start_date = line_estimates.month_start_date
            and targets.cluster_id = line_estimates.cluster_id
            and targets.cost_family = line_estimates.cost_family
            and line_estimates.is_unassigned
    where line_estimates.line_id is null
),

lines as (
    select * from line_estimates
    union all
    select * from unassigned_fillers
),

lines_with_targets as (
    select
        targets.bill_month,
        lines.month_start_date,
        lines.cluster_id,
        lines.cost_family,
        lines.line_key,
        lines.line_id,
        lines.is_unassigned,
        lines.estimated_cost,
        targets.target_cost,
        targets.minor_unit_digits,
        targets.factor,
        targets.is_reconciled,
        targets.basis,
        targets.close_status,
        targets.unassigned_policy
    from lines
    inner join targets
        on
            lines.month_start_date = targets.month_start_date
            and lines.cluster_id = targets.cluster_id
            and lines.cost_family = targets.cost_family
),

allocated as (
    {{ allocate_cents(
        'lines_with_targets',
        ['month_start_date', 'cluster_id', 'cost_family'],
        line_id='line_id',
        estimate='estimated_cost',
        target='target_cost',
        is_unassigned='is_unassigned',
        unassigned_policy='unassigned_policy',
        minor_unit_digits='minor_unit_digits',
    ) }}
),

final as (
    select
        {{ dbt.concat(['bill_month', "'|'", 'line_id']) }} as bill_line_id,
        bill_month,
        month_start_date,
        cluster_id,
        cost_family,
        line_key,
        line_id,
        is_unassigned,
        estimated_cost,
        allocation_estimate,
        exact_share,
        rounded_down_cost,
        is_carry_cent,
        billed_cost,
        target_cost,
        minor_unit_digits,
        factor,
        is_reconciled,
        basis,
        close_status,
        unassigned_policy
    from allocated
)

select * from final
