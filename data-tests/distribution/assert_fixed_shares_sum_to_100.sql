-- SPEC §7: the percentages of a `fixed` rule sum to 100 (per cluster and pool).
select
    cluster_id,
    pool,
    sum(percent) as total_percent
from {{ ref('stg_config__distribution_fixed_shares') }}
group by cluster_id, pool
having abs(sum(percent) - 100) > 0.000000001
