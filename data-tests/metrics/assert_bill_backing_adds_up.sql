-- The backings of a month add up to its bill exactly (decimal, `=`), and to the bill lines of
-- fct_bill_lines_monthly: no money is counted twice or left out of the split.
with

backing as (
    select
        bill_month,
        min(bill_total_cost) as bill_total_cost,
        max(bill_total_cost) as bill_total_cost_max,
        sum(billed_cost) as backed_cost
    from {{ ref('rpt_metrics_bill_backing_monthly') }}
    group by bill_month
),

lines as (
    select
        bill_month,
        sum(billed_cost) as billed_cost
    from {{ ref('fct_bill_lines_monthly') }}
    group by bill_month
)

select
    backing.bill_month,
    backing.bill_total_cost,
    backing.backed_cost,
    lines.billed_cost
from backing
left join lines
    on backing.bill_month = lines.bill_month
where
    backing.backed_cost <> backing.bill_total_cost
    or backing.bill_total_cost <> backing.bill_total_cost_max
    or lines.billed_cost is null
    or lines.billed_cost <> backing.bill_total_cost
