{{ config(materialized='view') }}

-- One row per month and bill line: the bill of record. A sealed month shows its sealed lines
-- (bill_state `sealed`, with the sum of its corrections); a month not sealed yet shows the
-- draft computed by the last build (bill_state `draft`), which may still change. A view, so
-- a seal shows here the moment it is written, without a rebuild.
{%- set sealed_bills = source('sealed', 'sealed_bills') %}
{%- set sealed_clusters = source('sealed', 'sealed_bill_clusters') %}
{%- set sealed_lines = source('sealed', 'sealed_bill_lines') %}
{%- set correction_lines = source('sealed', 'correction_bill_lines') %}
{%- set has_sealed = sealed_store_exists(
    [sealed_bills, sealed_clusters, sealed_lines, correction_lines]
) %}

with

draft_lines as (
    select
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
        is_carry_cent,
        billed_cost,
        target_cost,
        factor,
        is_reconciled,
        basis,
        close_status
    from {{ ref('int_bill_lines_allocated') }}
    {%- if has_sealed %}
        where
            bill_month not in (
                select sealed_bills.bill_month from {{ sealed_bills }} as sealed_bills
            )
    {%- endif %}
),

{%- if has_sealed %}

    correction_sums as (
        select
            bill_id,
            line_id,
            min(bill_month) as bill_month,
            min(month_start_date) as month_start_date,
            min(cluster_id) as cluster_id,
            min(cost_family) as cost_family,
            min(line_key) as line_key,
            sum(delta_cost) as delta_cost
        from {{ correction_lines }}
        group by
            bill_id,
            line_id
    ),

    sealed_rows as (
        select
            coalesce(sealed_lines.bill_id, correction_sums.bill_id) as bill_id,
            coalesce(sealed_lines.bill_month, correction_sums.bill_month) as bill_month,
            coalesce(sealed_lines.month_start_date, correction_sums.month_start_date)
                as month_start_date,
            coalesce(sealed_lines.cluster_id, correction_sums.cluster_id) as cluster_id,
            coalesce(sealed_lines.cost_family, correction_sums.cost_family) as cost_family,
            coalesce(sealed_lines.line_key, correction_sums.line_key) as line_key,
            coalesce(sealed_lines.line_id, correction_sums.line_id) as line_id,
            coalesce(
                sealed_lines.is_unassigned,
                correction_sums.line_key = '__unassigned__'
            ) as is_unassigned,
            coalesce(sealed_lines.estimated_cost, 0) as estimated_cost,
            coalesce(sealed_lines.allocation_estimate, 0) as allocation_estimate,
            coalesce(sealed_lines.exact_share, 0) as exact_share,
            coalesce(sealed_lines.is_carry_cent, false) as is_carry_cent,
            coalesce(sealed_lines.billed_cost, 0) as billed_cost,
            coalesce(correction_sums.delta_cost, 0) as correction_delta_cost
        from {{ sealed_lines }} as sealed_lines
        full outer join correction_sums
            on
                sealed_lines.bill_id = correction_sums.bill_id
                and sealed_lines.line_id = correction_sums.line_id
    ),

    sealed_bill_lines as (
        select
            sealed_rows.*,
            sealed_clusters.target_cost,
            sealed_clusters.factor,
            sealed_clusters.is_reconciled,
            sealed_clusters.basis,
            sealed_clusters.close_status
        from sealed_rows
        left join {{ sealed_clusters }} as sealed_clusters
            on
                sealed_rows.bill_month = sealed_clusters.bill_month
                and sealed_rows.cluster_id = sealed_clusters.cluster_id
                and sealed_rows.cost_family = sealed_clusters.cost_family
    ),
{%- endif %}

unioned as (
    select
        bill_month,
        month_start_date,
        'draft' as bill_state,
        cast(null as {{ dbt.type_string() }}) as bill_id,
        cluster_id,
        cost_family,
        line_key,
        line_id,
        is_unassigned,
        estimated_cost,
        allocation_estimate,
        exact_share,
        is_carry_cent,
        billed_cost,
        cast(0 as decimal(38, 3)) as correction_delta_cost,
        target_cost,
        factor,
        is_reconciled,
        basis,
        close_status
    from draft_lines
    {%- if has_sealed %}
        union all
        select
            bill_month,
            month_start_date,
            'sealed' as bill_state,
            bill_id,
            cluster_id,
            cost_family,
            line_key,
            line_id,
            is_unassigned,
            estimated_cost,
            allocation_estimate,
            exact_share,
            is_carry_cent,
            billed_cost,
            correction_delta_cost,
            target_cost,
            factor,
            is_reconciled,
            basis,
            close_status
        from sealed_bill_lines
    {%- endif %}
),

final as (
    select
        cast(
            {{ dbt.concat(['bill_month', "'|'", 'line_id']) }} as {{ dbt.type_string() }}
        ) as bill_line_id,
        cast(month_start_date as date) as bill_month,
        cast(bill_state as {{ dbt.type_string() }}) as bill_state,
        cast(bill_id as {{ dbt.type_string() }}) as bill_id,
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(cost_family as {{ dbt.type_string() }}) as cost_family,
        cast(line_key as {{ dbt.type_string() }}) as line_key,
        cast(line_id as {{ dbt.type_string() }}) as line_id,
        cast(is_unassigned as boolean) as is_unassigned,
        cast(estimated_cost as decimal(38, 6)) as estimated_cost,
        cast(allocation_estimate as decimal(38, 6)) as allocation_estimate,
        cast(exact_share as decimal(38, 10)) as exact_share,
        cast(is_carry_cent as boolean) as is_carry_cent,
        cast(billed_cost as decimal(38, 3)) as billed_cost,
        cast(correction_delta_cost as decimal(38, 3)) as correction_delta_cost,
        cast(billed_cost + correction_delta_cost as decimal(38, 3)) as corrected_billed_cost,
        cast(target_cost as decimal(38, 3)) as target_cost,
        cast(factor as decimal(38, 10)) as factor,
        cast(is_reconciled as boolean) as is_reconciled,
        cast(basis as {{ dbt.type_string() }}) as basis,
        cast(close_status as {{ dbt.type_string() }}) as close_status
    from unioned
)

select * from final
