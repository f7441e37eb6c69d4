{{ config(tags=['close']) }}

-- The leftover cents of a slice (0 <= k < number of lines) go one each to distinct lines; a
-- carried cent always lands on a line with a positive allocation estimate.
select
    bill_month,
    cluster_id,
    cost_family,
    count(*) as line_count,
    sum(case when is_carry_cent then 1 else 0 end) as carried_cents,
    sum(case when is_carry_cent and allocation_estimate <= 0 then 1 else 0 end)
        as cents_on_empty_lines
from {{ ref('int_bill_lines_allocated') }}
group by
    bill_month,
    cluster_id,
    cost_family
having
    sum(case when is_carry_cent then 1 else 0 end) >= count(*)
    or sum(case when is_carry_cent and allocation_estimate <= 0 then 1 else 0 end) > 0
