-- One row per cluster, UTC day and billed in-scope resource that nothing in Kubernetes claims
-- (SPEC §4, §8): lines the billing link selects that match no node, volume or load balancer
-- (`no_kubernetes_object`); an instance billed on a day its node reported no usage
-- (`no_usage`), and on a day the cluster reported no usage at all every other in-scope line
-- too (volumes, load balancers, control-plane fees, data transfer: nothing ran to allocate
-- them to; the day is pending through the repair window, then complete, SPEC §4); the part of
-- an Azure scale set's day cost for instances the agent never saw (`unseen_instances`).
-- Never spread into idle. `resource_id` is the resource as the bill writes it (Azure's mixed
-- case, Google's full instance path); `resource_key` the normalized key the joins use.
with

scoped as (
    select
        cluster_id,
        charge_date,
        cost_family,
        resource_type,
        resource_id,
        resource_key,
        match_key,
        scope_status,
        unallocated_reason,
        effective_cost
    from {{ ref('int_billing_lines_scoped') }}
),

usage_days as (
    select distinct
        cluster_id,
        usage_date
    from {{ ref('int_node_days') }}
),

node_costs as (
    select
        cluster_id,
        usage_date,
        match_key,
        node_cost
    from {{ ref('int_node_costs_daily') }}
    where pricing_basis = 'bill'
),

unmatched as (
    select
        cluster_id,
        charge_date as usage_date,
        cost_family,
        resource_type,
        resource_key,
        min(coalesce(resource_id, resource_key)) as resource_id,
        unallocated_reason,
        cast(sum(effective_cost) as double) as unallocated_cost
    from scoped
    where scope_status = 'unallocated'
    group by cluster_id, charge_date, cost_family, resource_type, resource_key, unallocated_reason
),

-- Lines of a cluster-day without usage that would otherwise go to a volume, a Service or a
-- pool (matched instances are the remainders below).
no_usage_lines as (
    select
        scoped.cluster_id,
        scoped.charge_date as usage_date,
        scoped.cost_family,
        scoped.resource_type,
        scoped.resource_key,
        min(coalesce(scoped.resource_id, scoped.resource_key)) as resource_id,
        'no_usage' as unallocated_reason,
        cast(sum(scoped.effective_cost) as double) as unallocated_cost
    from scoped
    left join usage_days
        on
            scoped.cluster_id = usage_days.cluster_id
            and scoped.charge_date = usage_days.usage_date
    where
        usage_days.usage_date is null
        and (
            scoped.scope_status in ('platform_fee', 'unattributed_network')
            or (scoped.scope_status = 'matched' and scoped.resource_type != 'instance')
        )
    group by
        scoped.cluster_id,
        scoped.charge_date,
        scoped.cost_family,
        scoped.resource_type,
        scoped.resource_key
),

instance_bills as (
    select
        cluster_id,
        charge_date as usage_date,
        match_key,
        max(resource_key) as resource_key,
        min(coalesce(resource_id, resource_key)) as resource_id,
        sum(effective_cost) as billed_cost
    from scoped
    where scope_status = 'matched' and resource_type = 'instance'
    group by cluster_id, charge_date, match_key
),

node_cost_by_key as (
    select
        cluster_id,
        usage_date,
        match_key,
        sum(node_cost) as allocated_cost
    from node_costs
    group by cluster_id, usage_date, match_key
),

instance_remainders as (
    select
        instance_bills.cluster_id,
        instance_bills.usage_date,
        'compute' as cost_family,
        'instance' as resource_type,
        instance_bills.resource_key,
        instance_bills.resource_id,
        case
            when node_cost_by_key.match_key is null then 'no_usage'
            else 'unseen_instances'
        end as unallocated_reason,
        cast(instance_bills.billed_cost as double) - coalesce(node_cost_by_key.allocated_cost, 0)
            as unallocated_cost
    from instance_bills
    left join node_cost_by_key
        on
            instance_bills.cluster_id = node_cost_by_key.cluster_id
            and instance_bills.usage_date = node_cost_by_key.usage_date
            and instance_bills.match_key = node_cost_by_key.match_key
),

final as (
    select * from unmatched
    union all
    select * from no_usage_lines
    union all
    select * from instance_remainders
    -- float noise of a split that hands out the whole bill is not a resource
    where abs(unallocated_cost) > 0.000001
)

select * from final
