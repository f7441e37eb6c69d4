-- The owners' parts of each bill line add up to the line's billed amount exactly, and every
-- line of the bill of record is explained (SPEC §9: every cent traceable to an owner).
with

parts as (
    select
        bill_month,
        line_id,
        sum(billed_cost) as billed_cost
    from {{ ref('rpt_owner_bill_explained') }}
    group by
        bill_month,
        line_id
),

lines as (
    select
        bill_month,
        line_id,
        billed_cost
    from {{ ref('fct_bill_lines_monthly') }}
)

select
    lines.bill_month,
    lines.line_id,
    lines.billed_cost,
    parts.billed_cost as owner_parts_cost
from lines
left join parts
    on
        lines.bill_month = parts.bill_month
        and lines.line_id = parts.line_id
where coalesce(parts.billed_cost, 0) <> lines.billed_cost
