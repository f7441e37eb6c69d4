-- SPEC §5: per cluster and day, direct + workload idle + platform + infrastructure idle
-- (+ unattributed pools) + unallocated = in-scope cost (billed, or priced otherwise), within
-- 0.000001.
select
    cluster_id,
    usage_date,
    ledger_cost,
    billed_cost_in_scope + estimated_cost + rate_card_cost as in_scope_cost
from {{ ref('fct_cluster_costs_daily') }}
where abs(ledger_cost - (billed_cost_in_scope + estimated_cost + rate_card_cost)) > 0.000001
