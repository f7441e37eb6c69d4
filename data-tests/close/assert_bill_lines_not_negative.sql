{{ config(tags=['close']) }}

-- No bill line is ever negative, and no slice has a negative target (a negative invoice is
-- billed at its estimate).
select
    'line' as what,
    bill_line_id as id,
    billed_cost as amount
from {{ ref('int_bill_lines_allocated') }}
where billed_cost < 0
union all
select
    'target' as what,
    bill_slice_id as id,
    target_cost as amount
from {{ ref('int_bill_targets_monthly') }}
where target_cost < 0
