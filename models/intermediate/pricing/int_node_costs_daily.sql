-- One row per cluster, node and UTC day the node ran: its cost and how it was priced
-- (SPEC §4). `bill`: the net amortized cost of the instance's compute lines that day (an Azure
-- scale set's day cost split by the hours each node ran); `rate_card`: the hourly price set
-- for a cluster with no cloud bill; `estimate`: a day the bill has not covered yet, or a node
-- the bill does not show, at the best hourly rate known; `unpriced`: no rate at all (cost 0).
with

node_days as (
    select
        cluster_id,
        node,
        usage_date,
        hours_run,
        node_role,
        cloud_provider,
        instance_key,
        scale_set_name
    from {{ ref('int_node_days') }}
),

clusters as (
    select
        cluster_id,
        provider
    from {{ ref('stg_config__clusters') }}
),

scoped_lines as (
    select
        cluster_id,
        charge_date,
        match_key,
        pricing_category,
        instance_type,
        region,
        usage_hours,
        effective_cost
    from {{ ref('int_billing_lines_scoped') }}
    where scope_status = 'matched' and resource_type = 'instance' and cost_family = 'compute'
),

cluster_days_billed as (
    select
        cluster_id,
        usage_date,
        is_billed
    from {{ ref('int_cluster_days_billed') }}
),

rate_card_prices as (
    select
        cluster_id,
        node,
        usage_date,
        hourly_price
    from {{ ref('int_node_rate_card_prices') }}
),

node_labels as (
    select
        cluster_id,
        node,
        usage_date,
        label_name,
        label_value
    from (
        select
            cluster_id,
            node,
            usage_date,
            lower({{ strip_operator_label_prefix('raw_label_key') }}) as label_name,
            label_value
        from {{ ref('int_node_labels_daily') }}
    ) as named
    where label_name in (
        'node_kubernetes_io_instance_type',
        'beta_kubernetes_io_instance_type',
        'topology_kubernetes_io_region',
        'failure_domain_beta_kubernetes_io_region',
        'eks_amazonaws_com_capacitytype',
        'karpenter_sh_capacity_type',
        'kubernetes_azure_com_scalesetpriority',
        'kubernetes_azure_com_priority',
        'cloud_google_com_gke_spot',
        'cloud_google_com_gke_preemptible'
    )
),

settings as (
    select estimate_lookback_days from {{ ref('stg_config__settings') }}
),

node_keys as (
    select
        node_days.*,
        coalesce(clusters.provider, node_days.cloud_provider) as cluster_provider,
        lower(
            case
                when node_days.cloud_provider = 'azure' then node_days.scale_set_name
                else node_days.instance_key
            end
        ) as match_key
    from node_days
    left join clusters on node_days.cluster_id = clusters.cluster_id
),

-- An instance's (or scale set's) bill for a day. The purchase option is that of the line
-- with the largest cost, ties to the alphabetically first option.
instance_bills as (
    select
        cluster_id,
        charge_date,
        match_key,
        sum(effective_cost) as billed_cost,
        sum(coalesce(usage_hours, 0)) as billed_hours,
        max(instance_type) as instance_type,
        max(region) as region,
        min(pricing_category) filter (where is_top_line) as pricing_category
    from (
        select
            *,
            row_number() over (
                partition by cluster_id, charge_date, match_key
                order by effective_cost desc, pricing_category asc
            ) = 1 as is_top_line
        from scoped_lines
    ) as ranked_lines
    group by cluster_id, charge_date, match_key
),

hours_by_key as (
    select
        cluster_id,
        usage_date,
        match_key,
        sum(hours_run) as key_hours_run
    from node_keys
    group by cluster_id, usage_date, match_key
),

billed_node_days as (
    select
        node_keys.cluster_id,
        node_keys.node,
        node_keys.usage_date,
        instance_bills.pricing_category,
        instance_bills.instance_type,
        instance_bills.region,
        instance_bills.billed_hours,
        cast(instance_bills.billed_cost as double)
        * node_keys.hours_run
        / case
            -- Azure bills a scale set: each node gets the set's day cost in proportion to the
            -- hours it ran, over the larger of hours seen and hours billed (SPEC §4).
            when node_keys.cloud_provider = 'azure'
                then greatest(hours_by_key.key_hours_run, instance_bills.billed_hours)
            else hours_by_key.key_hours_run
        end as node_cost
    from node_keys
    inner join hours_by_key
        on
            node_keys.cluster_id = hours_by_key.cluster_id
            and node_keys.usage_date = hours_by_key.usage_date
            and node_keys.match_key = hours_by_key.match_key
    inner join instance_bills
        on
            node_keys.cluster_id = instance_bills.cluster_id
            and node_keys.usage_date = instance_bills.charge_date
            and node_keys.match_key = instance_bills.match_key
    where hours_by_key.key_hours_run > 0
),

-- Hourly rates observed on billed days, for estimates.
observed_rates as (
    select
        cluster_id,
        charge_date,
        match_key,
        instance_type,
        pricing_category,
        region,
        cast(billed_cost as double) / billed_hours as hourly_rate
    from instance_bills
    where billed_hours > 0
),

unbilled_node_days as (
    select
        node_keys.*,
        not coalesce(cluster_days_billed.is_billed, false) as is_day_unbilled
    from node_keys
    left join billed_node_days
        on
            node_keys.cluster_id = billed_node_days.cluster_id
            and node_keys.node = billed_node_days.node
            and node_keys.usage_date = billed_node_days.usage_date
    left join cluster_days_billed
        on
            node_keys.cluster_id = cluster_days_billed.cluster_id
            and node_keys.usage_date = cluster_days_billed.usage_date
    where billed_node_days.node is null and node_keys.cluster_provider != 'on_prem'
),

-- (1) the instance's own last billed day before this one
last_instance_rate as (
    select
        unbilled_node_days.cluster_id,
        unbilled_node_days.node,
        unbilled_node_days.usage_date,
        observed_rates.hourly_rate,
        observed_rates.instance_type,
        observed_rates.pricing_category,
        observed_rates.region,
        row_number() over (
            partition by
                unbilled_node_days.cluster_id,
                unbilled_node_days.node,
                unbilled_node_days.usage_date
            order by observed_rates.charge_date desc
        ) as recency
    from unbilled_node_days
    inner join observed_rates
        on
            unbilled_node_days.cluster_id = observed_rates.cluster_id
            and unbilled_node_days.match_key = observed_rates.match_key
            and unbilled_node_days.usage_date > observed_rates.charge_date
),

-- What a node's labels say of how the bill will price it, for a node with no billed day of its
-- own: instance type, region and whether it is spot capacity (EKS, Karpenter, GKE, AKS labels).
node_label_attributes as (
    select
        cluster_id,
        node,
        usage_date,
        max(
            case
                when label_name in (
                    'node_kubernetes_io_instance_type', 'beta_kubernetes_io_instance_type'
                ) then label_value
            end
        ) as instance_type,
        max(
            case
                when label_name in (
                    'topology_kubernetes_io_region', 'failure_domain_beta_kubernetes_io_region'
                ) then label_value
            end
        ) as region,
        coalesce(max(
            case
                when label_name in (
                    'eks_amazonaws_com_capacitytype',
                    'karpenter_sh_capacity_type',
                    'kubernetes_azure_com_scalesetpriority',
                    'kubernetes_azure_com_priority'
                ) then lower(label_value) = 'spot'
                when label_name in (
                    'cloud_google_com_gke_spot', 'cloud_google_com_gke_preemptible'
                ) then lower(label_value) = 'true'
            end
        ), false) as is_spot
    from node_labels
    group by cluster_id, node, usage_date
),

-- The instance type, purchase option and region a node-day is estimated as: those of its own
-- last billed day, else what its labels say (spot, or else on demand).
estimate_attributes as (
    select
        unbilled_node_days.cluster_id,
        unbilled_node_days.node,
        unbilled_node_days.usage_date,
        coalesce(last_instance_rate.instance_type, node_label_attributes.instance_type)
            as instance_type,
        coalesce(last_instance_rate.region, node_label_attributes.region) as region,
        coalesce(
            last_instance_rate.pricing_category,
            case when node_label_attributes.is_spot then 'spot' end
        ) as pricing_category
    from unbilled_node_days
    left join last_instance_rate
        on
            unbilled_node_days.cluster_id = last_instance_rate.cluster_id
            and unbilled_node_days.node = last_instance_rate.node
            and unbilled_node_days.usage_date = last_instance_rate.usage_date
            and last_instance_rate.recency = 1
    left join node_label_attributes
        on
            unbilled_node_days.cluster_id = node_label_attributes.cluster_id
            and unbilled_node_days.node = node_label_attributes.node
            and unbilled_node_days.usage_date = node_label_attributes.usage_date
),

-- (2) the median hourly rate over the lookback window before the day of every billed node (any
-- cluster) of the same instance type, purchase option and region, so a node new since the last
-- bill gets its peers' rate. A node whose purchase option only its labels tell is matched to
-- peers of its capacity: spot to spot, on demand to every peer that is not spot (a savings
-- plan, reservation or commitment is a discount the bill applies to on-demand capacity).
-- The median depends on the day and what the node is estimated as, not on the node: it is
-- taken once per such key. Per node-day, a day of 10,000 new nodes met 200 M peer rates and
-- spilled past 50 GB.
estimate_keys as (
    select distinct
        instance_type,
        region,
        pricing_category,
        usage_date
    from estimate_attributes
),

type_median_rate as (
    select
        estimate_keys.instance_type,
        estimate_keys.region,
        estimate_keys.pricing_category,
        estimate_keys.usage_date,
        {{ median("observed_rates.hourly_rate") }} as hourly_rate
    from estimate_keys
    cross join settings
    inner join observed_rates
        on
            estimate_keys.instance_type = observed_rates.instance_type
            and estimate_keys.region = observed_rates.region
            and (
                estimate_keys.pricing_category = observed_rates.pricing_category
                or (
                    estimate_keys.pricing_category is null
                    and observed_rates.pricing_category != 'spot'
                )
            )
            and estimate_keys.usage_date > observed_rates.charge_date
            and observed_rates.charge_date >= {{ dbt.dateadd(
                'day', '-settings.estimate_lookback_days', 'estimate_keys.usage_date'
            ) }}
    group by
        estimate_keys.instance_type,
        estimate_keys.region,
        estimate_keys.pricing_category,
        estimate_keys.usage_date
),

estimated_node_days as (
    select
        unbilled_node_days.cluster_id,
        unbilled_node_days.node,
        unbilled_node_days.usage_date,
        estimate_attributes.pricing_category,
        estimate_attributes.instance_type,
        estimate_attributes.region,
        cast(null as double) as billed_hours,
        coalesce(
            last_instance_rate.hourly_rate,
            type_median_rate.hourly_rate,
            rate_card_prices.hourly_price
        ) * unbilled_node_days.hours_run as node_cost,
        case
            when last_instance_rate.hourly_rate is not null then 'last_billed_day'
            when type_median_rate.hourly_rate is not null then 'instance_type_median'
            when rate_card_prices.hourly_price is not null then 'rate_card'
        end as estimate_source,
        unbilled_node_days.is_day_unbilled
    from unbilled_node_days
    left join last_instance_rate
        on
            unbilled_node_days.cluster_id = last_instance_rate.cluster_id
            and unbilled_node_days.node = last_instance_rate.node
            and unbilled_node_days.usage_date = last_instance_rate.usage_date
            and last_instance_rate.recency = 1
    left join estimate_attributes
        on
            unbilled_node_days.cluster_id = estimate_attributes.cluster_id
            and unbilled_node_days.node = estimate_attributes.node
            and unbilled_node_days.usage_date = estimate_attributes.usage_date
    left join type_median_rate
        on
            estimate_attributes.instance_type = type_median_rate.instance_type
            and estimate_attributes.region = type_median_rate.region
            and estimate_attributes.pricing_category
            is not distinct from type_median_rate.pricing_category
            and unbilled_node_days.usage_date = type_median_rate.usage_date
    left join rate_card_prices
        on
            unbilled_node_days.cluster_id = rate_card_prices.cluster_id
            and unbilled_node_days.node = rate_card_prices.node
            and unbilled_node_days.usage_date = rate_card_prices.usage_date
),

rate_card_node_days as (
    select
        node_keys.cluster_id,
        node_keys.node,
        node_keys.usage_date,
        'on_demand' as pricing_category,
        cast(null as {{ dbt.type_string() }}) as instance_type,
        cast(null as {{ dbt.type_string() }}) as region,
        cast(null as double) as billed_hours,
        rate_card_prices.hourly_price * node_keys.hours_run as node_cost
    from node_keys
    left join rate_card_prices
        on
            node_keys.cluster_id = rate_card_prices.cluster_id
            and node_keys.node = rate_card_prices.node
            and node_keys.usage_date = rate_card_prices.usage_date
    where node_keys.cluster_provider = 'on_prem'
),

priced as (
    select
        cluster_id,
        node,
        usage_date,
        pricing_category,
        instance_type,
        region,
        billed_hours,
        node_cost,
        'bill' as pricing_basis,
        cast(null as {{ dbt.type_string() }}) as estimate_source
    from billed_node_days
    union all
    select
        cluster_id,
        node,
        usage_date,
        pricing_category,
        instance_type,
        region,
        billed_hours,
        coalesce(node_cost, 0) as node_cost,
        case when node_cost is null then 'unpriced' else 'estimate' end as pricing_basis,
        case
            when is_day_unbilled then coalesce(estimate_source, 'none')
            else 'no_bill_match:' || coalesce(estimate_source, 'none')
        end as estimate_source
    from estimated_node_days
    union all
    select
        cluster_id,
        node,
        usage_date,
        pricing_category,
        instance_type,
        region,
        billed_hours,
        coalesce(node_cost, 0) as node_cost,
        case when node_cost is null then 'unpriced' else 'rate_card' end as pricing_basis,
        cast(null as {{ dbt.type_string() }}) as estimate_source
    from rate_card_node_days
),

final as (
    select
        node_keys.cluster_id,
        node_keys.node,
        node_keys.usage_date,
        -- `provider` is the column name the marts expect, though sqlfluff counts it a keyword
        node_keys.cluster_provider as provider,  -- noqa: RF04
        node_keys.cloud_provider,
        node_keys.instance_key,
        node_keys.scale_set_name,
        node_keys.match_key,
        node_keys.node_role,
        node_keys.hours_run,
        priced.billed_hours,
        priced.instance_type,
        priced.region,
        coalesce(priced.pricing_category, 'on_demand') as purchase_option,
        priced.pricing_basis,
        priced.estimate_source,
        priced.node_cost
    from node_keys
    inner join priced
        on
            node_keys.cluster_id = priced.cluster_id
            and node_keys.node = priced.node
            and node_keys.usage_date = priced.usage_date
)

select * from final
