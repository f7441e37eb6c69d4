{{ config(tags=['close']) }}

-- The sealed store stays balanced: every sealed slice's lines sum to its target, and every
-- sealed bill's slices sum to the bill's total (`=` on decimal(38, 3)). Passes trivially
-- until the first seal creates schema `sealed`.
{%- set sealed_bills = source('sealed', 'sealed_bills') %}
{%- set sealed_clusters = source('sealed', 'sealed_bill_clusters') %}
{%- set sealed_lines = source('sealed', 'sealed_bill_lines') %}
{%- if sealed_store_exists([sealed_bills, sealed_clusters, sealed_lines]) %}

    with

    line_sums as (
        select
            bill_id,
            cluster_id,
            cost_family,
            sum(billed_cost) as billed_cost
        from {{ sealed_lines }}
        group by
            bill_id,
            cluster_id,
            cost_family
    ),

    slice_sums as (
        select
            bill_id,
            sum(target_cost) as target_cost
        from {{ sealed_clusters }}
        group by bill_id
    )

    select
        'slice' as what,
        sealed_clusters.bill_id,
        sealed_clusters.cluster_id,
        sealed_clusters.cost_family
    from {{ sealed_clusters }} as sealed_clusters
    left join line_sums
        on
            sealed_clusters.bill_id = line_sums.bill_id
            and sealed_clusters.cluster_id = line_sums.cluster_id
            and sealed_clusters.cost_family = line_sums.cost_family
    where not coalesce(line_sums.billed_cost = sealed_clusters.target_cost, false)
    union all
    select
        'bill' as what,
        sealed_bills.bill_id,
        cast(null as {{ dbt.type_string() }}) as cluster_id,
        cast(null as {{ dbt.type_string() }}) as cost_family
    from {{ sealed_bills }} as sealed_bills
    left join slice_sums
        on sealed_bills.bill_id = slice_sums.bill_id
    where not coalesce(slice_sums.target_cost = sealed_bills.billed_cost, false)

{%- else %}

    select 1 as sealed_store_missing
    where 1 = 0

{%- endif %}
