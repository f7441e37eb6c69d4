-- SPEC §4 and §10: the lines placed in the Kubernetes chargeback are the scope model's lines,
-- so per cluster and charge month their effective_cost equals the scope's exactly (clusters
-- that attribute_cluster_to gives to an allocation are not in the chargeback; ignored
-- zero-cost scope lines add 0). Returns the cluster-months that differ.
with

chargeback as (
    select
        cluster_id,
        charge_month,
        sum(effective_cost) as effective_cost
    from {{ ref('fct_cloud_charge_allocations') }}
    where placement = 'kubernetes_chargeback'
    group by cluster_id, charge_month
),

scope as (
    select
        scoped.cluster_id,
        cast({{ dbt.date_trunc('month', 'scoped.charge_date') }} as date) as charge_month,
        sum(scoped.effective_cost) as effective_cost
    from {{ ref('int_billing_lines_scoped') }} as scoped
    left join {{ ref('stg_config_allocations__cluster_allocations') }} as given_away
        on scoped.cluster_id = given_away.cluster_id
    where given_away.cluster_id is null
    group by
        scoped.cluster_id,
        cast({{ dbt.date_trunc('month', 'scoped.charge_date') }} as date)
)

select
    coalesce(scope.cluster_id, chargeback.cluster_id) as cluster_id,
    coalesce(scope.charge_month, chargeback.charge_month) as charge_month,
    scope.effective_cost as scope_cost,
    chargeback.effective_cost as chargeback_cost
from scope
full outer join chargeback
    on
        scope.cluster_id = chargeback.cluster_id
        and scope.charge_month = chargeback.charge_month
where coalesce(scope.effective_cost, 0) != coalesce(chargeback.effective_cost, 0)
