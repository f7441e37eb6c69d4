-- The rate-card hourly price of each node-day (SPEC §4, no-bill clusters): a node's own name
-- price wins; otherwise the first label price in list order that the node carries that day.
-- Each selector's price is the one in effect that day (the latest `effective_from` on or
-- before it), so a changed price applies from its date on and earlier days keep theirs.
with

node_days as (
    select
        cluster_id,
        node,
        usage_date
    from {{ ref('int_node_days') }}
),

node_labels as (
    select
        cluster_id,
        node,
        usage_date,
        {{ sanitize_label_key('raw_label_key') }} as label_key,
        label_value
    from {{ ref('int_node_labels_daily') }}
),

prices as (
    select
        cluster_id,
        selector_type,
        selector,
        price,
        effective_from,
        list_position
    from {{ ref('stg_rate_card__prices') }}
    where resource = 'node' and unit = 'hour'
),

-- A label selector `key=value` is compared on the sanitized key (so
-- `node.kubernetes.io/instance-type` matches the operator's
-- `label_node_kubernetes_io_instance_type`) and on the value as written.
label_selectors as (
    select distinct
        cluster_id,
        selector,
        {{ sanitize_label_key("split_part(selector, '=', 1)") }} as label_key,
        substr(selector, length(split_part(selector, '=', 1)) + 2) as label_value
    from prices
    where selector_type = 'label'
),

-- The price of each selector in effect on each node-day.
candidates as (
    select
        node_days.cluster_id,
        node_days.node,
        node_days.usage_date,
        prices.selector_type,
        prices.selector,
        prices.price,
        prices.effective_from,
        prices.list_position
    from node_days
    inner join prices
        on
            node_days.cluster_id = prices.cluster_id
            and prices.selector_type = 'node'
            and node_days.node = prices.selector
            and node_days.usage_date >= prices.effective_from
    union all
    select
        node_days.cluster_id,
        node_days.node,
        node_days.usage_date,
        prices.selector_type,
        prices.selector,
        prices.price,
        prices.effective_from,
        prices.list_position
    from node_days
    inner join label_selectors
        on node_days.cluster_id = label_selectors.cluster_id
    inner join node_labels
        on
            node_days.cluster_id = node_labels.cluster_id
            and node_days.node = node_labels.node
            and node_days.usage_date = node_labels.usage_date
            and label_selectors.label_key = node_labels.label_key
            and label_selectors.label_value = node_labels.label_value
    inner join prices
        on
            label_selectors.cluster_id = prices.cluster_id
            and label_selectors.selector = prices.selector
            and prices.selector_type = 'label'
            and node_days.usage_date >= prices.effective_from
),

in_effect as (
    select
        *,
        -- a selector's place in the list is where it first appears
        min(list_position) over (partition by cluster_id, selector_type, selector)
            as selector_position,
        row_number() over (
            partition by cluster_id, node, usage_date, selector_type, selector
            order by effective_from desc, list_position desc
        ) as version_rank
    from candidates
),

ranked as (
    select
        *,
        row_number() over (
            partition by cluster_id, node, usage_date
            order by
                case when selector_type = 'node' then 0 else 1 end,
                selector_position,
                selector
        ) as precedence
    from in_effect
    where version_rank = 1
),

final as (
    select
        cluster_id,
        node,
        usage_date,
        selector_type as price_selector_type,
        selector as price_selector,
        effective_from as price_effective_from,
        price as hourly_price
    from ranked
    where precedence = 1
)

select * from final
