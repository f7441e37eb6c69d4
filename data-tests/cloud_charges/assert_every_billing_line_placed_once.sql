-- SPEC §10: every billing line appears exactly once in fct_cloud_charge_allocations, and
-- nothing else does. Returns the lines missing, duplicated or unknown to the bill.
with

bill_lines as (
    select billing_line_id from {{ ref('fct_billing_lines') }}
),

placed_lines as (
    select
        billing_line_id,
        count(*) as times_placed
    from {{ ref('fct_cloud_charge_allocations') }}
    group by billing_line_id
)

select
    coalesce(bill_lines.billing_line_id, placed_lines.billing_line_id) as billing_line_id,
    coalesce(placed_lines.times_placed, 0) as times_placed,
    bill_lines.billing_line_id is not null as is_on_the_bill
from bill_lines
full outer join placed_lines on bill_lines.billing_line_id = placed_lines.billing_line_id
where
    bill_lines.billing_line_id is null
    or placed_lines.billing_line_id is null
    or placed_lines.times_placed != 1
