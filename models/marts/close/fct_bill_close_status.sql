{{ config(materialized='view') }}

-- One row per month, cluster and cost family: the state of the monthly close. A month not
-- sealed yet shows the close as computed by the last build (status ready, blocked or
-- estimated_fallback, with the reason, the factor and the days missing); a sealed month shows
-- the slice as sealed, and whether recomputing it now gives different lines (a pending
-- correction: `kubeledger correct --month`).
{%- set sealed_bills = source('sealed', 'sealed_bills') %}
{%- set sealed_clusters = source('sealed', 'sealed_bill_clusters') %}
{%- set sealed_lines = source('sealed', 'sealed_bill_lines') %}
{%- set correction_lines = source('sealed', 'correction_bill_lines') %}
{%- set has_sealed = sealed_store_exists(
    [sealed_bills, sealed_clusters, sealed_lines, correction_lines]
) %}

with

targets as (
    select * from {{ ref('int_bill_targets_monthly') }}
),

allocated_lines as (
    select
        bill_month,
        cluster_id,
        cost_family,
        line_id,
        billed_cost
    from {{ ref('int_bill_lines_allocated') }}
),

draft_billed as (
    select
        bill_month,
        cluster_id,
        cost_family,
        sum(billed_cost) as billed_cost
    from allocated_lines
    group by
        bill_month,
        cluster_id,
        cost_family
),

draft_slices as (
    select
        targets.bill_month,
        targets.month_start_date,
        'draft' as bill_state,
        cast(null as {{ dbt.type_string() }}) as bill_id,
        targets.cluster_id,
        targets.cost_family,
        targets.currency,
        targets.has_billing_link,
        targets.link_state,
        targets.billing_line_count,
        targets.invoice_cost,
        targets.estimated_cost,
        targets.target_cost,
        coalesce(draft_billed.billed_cost, 0) as billed_cost,
        targets.basis,
        targets.is_reconciled,
        targets.factor,
        targets.invoice_factor,
        targets.factor_drift,
        targets.has_factor_drift,
        targets.close_status,
        targets.reason,
        targets.anomaly,
        targets.days_due,
        targets.days_missing,
        targets.first_missing_date,
        targets.missing_dates,
        targets.as_of_date,
        targets.closable_from_date,
        targets.deadline_date,
        false as has_pending_correction
    from targets
    left join draft_billed
        on
            targets.bill_month = draft_billed.bill_month
            and targets.cluster_id = draft_billed.cluster_id
            and targets.cost_family = draft_billed.cost_family
    {%- if has_sealed %}
        where
            targets.bill_month not in (
                select sealed_bills.bill_month from {{ sealed_bills }} as sealed_bills
            )
    {%- endif %}
),

{%- if has_sealed %}

    -- The sealed bill as corrected so far, line by line.
    effective_lines as (
        select
            bill_month,
            cluster_id,
            cost_family,
            line_id,
            sum(billed_cost) as billed_cost
        from (
            select
                bill_month,
                cluster_id,
                cost_family,
                line_id,
                billed_cost
            from {{ sealed_lines }}
            union all
            select
                bill_month,
                cluster_id,
                cost_family,
                line_id,
                delta_cost as billed_cost
            from {{ correction_lines }}
        ) as sealed_and_corrected
        group by
            bill_month,
            cluster_id,
            cost_family,
            line_id
    ),

    -- The sealed months as the last build recomputes them.
    recomputed_sealed_lines as (
        select allocated_lines.*
        from allocated_lines
        where
            allocated_lines.bill_month in (
                select sealed_bills.bill_month from {{ sealed_bills }} as sealed_bills
            )
    ),

    pending_corrections as (
        select
            coalesce(effective_lines.bill_month, recomputed.bill_month) as bill_month,
            coalesce(effective_lines.cluster_id, recomputed.cluster_id) as cluster_id,
            coalesce(effective_lines.cost_family, recomputed.cost_family) as cost_family,
            {{ dbt.bool_or(
                'not (coalesce(effective_lines.billed_cost, 0) = coalesce(recomputed.billed_cost, 0))'
            ) }} as has_pending_correction
        from effective_lines
        full outer join recomputed_sealed_lines as recomputed
            on
                effective_lines.bill_month = recomputed.bill_month
                and effective_lines.line_id = recomputed.line_id
        group by
            coalesce(effective_lines.bill_month, recomputed.bill_month),
            coalesce(effective_lines.cluster_id, recomputed.cluster_id),
            coalesce(effective_lines.cost_family, recomputed.cost_family)
    ),

    sealed_slices as (
        select
            sealed_clusters.bill_month,
            sealed_clusters.month_start_date,
            'sealed' as bill_state,
            sealed_clusters.bill_id,
            sealed_clusters.cluster_id,
            sealed_clusters.cost_family,
            sealed_clusters.currency,
            sealed_clusters.has_billing_link,
            sealed_clusters.link_state,
            sealed_clusters.billing_line_count,
            sealed_clusters.invoice_cost,
            sealed_clusters.estimated_cost,
            sealed_clusters.target_cost,
            sealed_clusters.billed_cost,
            sealed_clusters.basis,
            sealed_clusters.is_reconciled,
            sealed_clusters.factor,
            sealed_clusters.invoice_factor,
            sealed_clusters.factor_drift,
            sealed_clusters.has_factor_drift,
            sealed_clusters.close_status,
            sealed_clusters.reason,
            sealed_clusters.anomaly,
            sealed_clusters.days_due,
            sealed_clusters.days_missing,
            sealed_clusters.first_missing_date,
            sealed_clusters.missing_dates,
            sealed_clusters.as_of_date,
            sealed_clusters.closable_from_date,
            sealed_clusters.deadline_date,
            coalesce(pending_corrections.has_pending_correction, false) as has_pending_correction
        from {{ sealed_clusters }} as sealed_clusters
        left join pending_corrections
            on
                sealed_clusters.bill_month = pending_corrections.bill_month
                and sealed_clusters.cluster_id = pending_corrections.cluster_id
                and sealed_clusters.cost_family = pending_corrections.cost_family
    ),
{%- endif %}

unioned as (
    select * from draft_slices
    {%- if has_sealed %}
        union all
        select * from sealed_slices
    {%- endif %}
),

final as (
    select
        cast(
            {{ dbt.concat(['bill_month', "'|'", 'cluster_id', "'|'", 'cost_family']) }}
            as {{ dbt.type_string() }}
        ) as bill_slice_id,
        cast(month_start_date as date) as bill_month,
        cast(bill_state as {{ dbt.type_string() }}) as bill_state,
        cast(bill_id as {{ dbt.type_string() }}) as bill_id,
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(cost_family as {{ dbt.type_string() }}) as cost_family,
        cast(currency as {{ dbt.type_string() }}) as currency,
        cast(has_billing_link as boolean) as has_billing_link,
        cast(link_state as {{ dbt.type_string() }}) as link_state,
        cast(billing_line_count as integer) as billing_line_count,
        cast(invoice_cost as decimal(38, 3)) as invoice_cost,
        cast(estimated_cost as decimal(38, 6)) as estimated_cost,
        cast(target_cost as decimal(38, 3)) as target_cost,
        cast(billed_cost as decimal(38, 3)) as billed_cost,
        cast(basis as {{ dbt.type_string() }}) as basis,
        cast(is_reconciled as boolean) as is_reconciled,
        cast(factor as decimal(38, 10)) as factor,
        cast(invoice_factor as decimal(38, 10)) as invoice_factor,
        cast(factor_drift as decimal(38, 10)) as factor_drift,
        cast(has_factor_drift as boolean) as has_factor_drift,
        cast(close_status as {{ dbt.type_string() }}) as close_status,
        cast(reason as {{ dbt.type_string() }}) as reason,
        cast(anomaly as {{ dbt.type_string() }}) as anomaly,
        cast(days_due as integer) as days_due,
        cast(days_missing as integer) as days_missing,
        cast(first_missing_date as date) as first_missing_date,
        cast(missing_dates as {{ dbt.type_string() }}) as missing_dates,
        cast(as_of_date as date) as as_of_date,
        cast(closable_from_date as date) as closable_from_date,
        cast(deadline_date as date) as deadline_date,
        cast(has_pending_correction as boolean) as has_pending_correction
    from unioned
)

select * from final
