{{ config(tags=['close']) }}

-- Every bill slice's lines sum to its target exactly (`=` on decimal(38, 3), never an
-- epsilon), and every slice has lines: the invariant a seal asserts again before writing.
with

line_sums as (
    select
        bill_month,
        cluster_id,
        cost_family,
        sum(billed_cost) as billed_cost
    from {{ ref('int_bill_lines_allocated') }}
    group by
        bill_month,
        cluster_id,
        cost_family
),

targets as (
    select
        bill_month,
        cluster_id,
        cost_family,
        target_cost
    from {{ ref('int_bill_targets_monthly') }}
)

select
    coalesce(targets.bill_month, line_sums.bill_month) as bill_month,
    coalesce(targets.cluster_id, line_sums.cluster_id) as cluster_id,
    coalesce(targets.cost_family, line_sums.cost_family) as cost_family,
    targets.target_cost,
    line_sums.billed_cost
from targets
full outer join line_sums
    on
        targets.bill_month = line_sums.bill_month
        and targets.cluster_id = line_sums.cluster_id
        and targets.cost_family = line_sums.cost_family
where not coalesce(targets.target_cost = line_sums.billed_cost, false)
