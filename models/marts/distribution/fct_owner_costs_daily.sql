-- One row per cluster, UTC day, cost family and owner after distribution (SPEC §7): the
-- owner's direct cost, its own workload idle (under the `owner` rule), and each distributed
-- share in its own column, so every total can be taken apart again. Rows with owner_status
-- `separate` are pools shown as their own line; `unallocated` rows are resources nothing in
-- Kubernetes claims (never distributed). Per cluster and day, total_cost sums to the ledger
-- cost of fct_cluster_costs_daily. Money is summed exactly (`exact_sum`): the bill estimates are
-- sums of these figures, and must not depend on the order rows are added in (SPEC §1.3).
with

owner_costs as (
    select
        cluster_id,
        usage_date,
        cost_family,
        team,
        cost_center,
        application,
        owner_status,
        direct_cost,
        workload_idle_cost
    from {{ ref('int_owner_costs_by_node_daily') }}
),

shares as (
    select
        cluster_id,
        usage_date,
        cost_family,
        pool,
        team,
        cost_center,
        application,
        owner_status,
        share_cost
    from {{ ref('int_shared_costs_distributed') }}
),

unallocated as (
    select
        cluster_id,
        usage_date,
        cost_family,
        unallocated_cost
    from {{ ref('int_unallocated_costs_daily') }}
),

rules as (
    select
        cluster_id,
        rule
    from {{ ref('stg_config__distribution_rules') }}
    where pool = 'workload_idle'
),

-- whether workload idle stays with its owner in each cluster (the default `owner` rule)
owner_rule_clusters as (
    select
        clusters.cluster_id,
        coalesce(own_rule.rule, any_rule.rule, 'owner') = 'owner' as is_owner_rule
    from (select distinct cluster_id from owner_costs) as clusters
    left join rules as own_rule on clusters.cluster_id = own_rule.cluster_id
    left join rules as any_rule on any_rule.cluster_id = '*'
),

{% set pools = ['platform', 'infrastructure_idle', 'workload_idle', 'unattributed_storage',
                'unattributed_network'] %}

ledger_rows as (
    select
        owner_costs.cluster_id,
        owner_costs.usage_date,
        owner_costs.cost_family,
        owner_costs.team,
        owner_costs.cost_center,
        owner_costs.application,
        owner_costs.owner_status,
        owner_costs.direct_cost,
        case
            when owner_rule_clusters.is_owner_rule then owner_costs.workload_idle_cost else 0
        end as workload_idle_cost,
        {% for pool in pools %}
            0.0 as {{ pool }}_share_cost,
        {% endfor %}
        0.0 as unallocated_cost
    from owner_costs
    inner join owner_rule_clusters on owner_costs.cluster_id = owner_rule_clusters.cluster_id
    union all
    select
        cluster_id,
        usage_date,
        cost_family,
        team,
        cost_center,
        application,
        owner_status,
        0.0 as direct_cost,
        0.0 as workload_idle_cost,
        {% for pool in pools %}
            case when pool = '{{ pool }}' then share_cost else 0 end as {{ pool }}_share_cost,
        {% endfor %}
        0.0 as unallocated_cost
    from shares
    union all
    select
        cluster_id,
        usage_date,
        cost_family,
        cast(null as {{ dbt.type_string() }}) as team,
        cast(null as {{ dbt.type_string() }}) as cost_center,
        cast(null as {{ dbt.type_string() }}) as application,
        'unallocated' as owner_status,
        0.0 as direct_cost,
        0.0 as workload_idle_cost,
        {% for pool in pools %}
            0.0 as {{ pool }}_share_cost,
        {% endfor %}
        unallocated_cost
    from unallocated
),

final as (
    select
        cluster_id,
        usage_date,
        cost_family,
        coalesce(team, 'unallocated') as team,
        coalesce(cost_center, 'unallocated') as cost_center,
        coalesce(application, 'unallocated') as application,
        owner_status,
        {{ exact_sum('direct_cost') }} as direct_cost,
        {{ exact_sum('workload_idle_cost') }} as workload_idle_cost,
        {% for pool in pools %}
            {{ exact_sum(pool ~ '_share_cost') }} as {{ pool }}_share_cost,
        {% endfor %}
        {{ exact_sum('unallocated_cost') }} as unallocated_cost,
        {% set row_total -%}
            direct_cost + workload_idle_cost
            {%- for pool in pools %} + {{ pool }}_share_cost{% endfor %} + unallocated_cost
        {%- endset %}
        {{ exact_sum(row_total) }} as total_cost
    from ledger_rows
    group by
        cluster_id,
        usage_date,
        cost_family,
        coalesce(team, 'unallocated'),
        coalesce(cost_center, 'unallocated'),
        coalesce(application, 'unallocated'),
        owner_status
    -- a platform pod's owner row carries nothing (its cost is in the platform pool)
    having
        sum(
            abs(direct_cost) + abs(workload_idle_cost) + abs(unallocated_cost)
            {% for pool in pools %}
                + abs({{ pool }}_share_cost)
            {% endfor %}
        ) > 0
)

select * from final
