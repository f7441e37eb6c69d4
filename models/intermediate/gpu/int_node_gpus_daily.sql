{{ config(**incremental_by_day('usage_date')) }}

-- One row per cluster, GPU node and UTC day (SPEC §5): how many GPUs it has, their model, and
-- the share of its cost that is the GPUs'. A node has GPUs when its labels give an
-- `nvidia.com/gpu.count` (the `nvidia.com/gpu` capacity, as GPU feature discovery labels it)
-- or the operator's GPU report shows GPUs on it; its GPU count is the larger of the two
-- (GPUs no pod held that day are in the label, not the report). The GPU share is the first
-- of: `gpu.shares` for its instance type, the first `gpu.shares` GPU model its model name
-- contains (case-insensitive, list order), the shipped seed `gpu_instance_types` for its
-- instance type, `gpu.default_share`. The instance type is the bill's, else the node's
-- `node.kubernetes.io/instance-type` label.
with

node_costs as (
    select
        cluster_id,
        node,
        usage_date,
        instance_type
    from {{ ref('int_node_costs_daily') }}
    where {{ day_range_filter('usage_date') }}
),

node_labels as (
    select
        cluster_id,
        node,
        usage_date,
        lower({{ strip_operator_label_prefix('raw_label_key') }}) as label_name,
        label_value
    from {{ ref('int_node_labels_daily') }}
    where {{ day_range_filter('usage_date') }}
),

gpu_rows as (
    select
        cluster_id,
        node,
        usage_date,
        gpu_uuid,
        gpu_model_name
    from {{ ref('stg_koku__gpu_usage') }}
    where {{ day_range_filter('usage_date', source_day='source_day') }}
),

configured_shares as (
    select
        list_position,
        match_kind,
        match_value,
        gpu_share
    from {{ ref('stg_config__gpu_cost_shares') }}
),

seed_shares as (
    select
        lower(instance_type) as instance_type,
        cast(gpu_share as double) as gpu_share
    from {{ ref('gpu_instance_types') }}
),

labelled as (
    select
        cluster_id,
        node,
        usage_date,
        max(
            case
                when label_name = 'nvidia_com_gpu_count'
                    then cast(cast(nullif(trim(label_value), '') as double) as integer)
            end
        ) as labelled_gpu_count,
        max(case when label_name = 'nvidia_com_gpu_product' then label_value end)
            as labelled_gpu_model,
        max(
            case
                when label_name in (
                    'node_kubernetes_io_instance_type', 'beta_kubernetes_io_instance_type'
                ) then label_value
            end
        ) as labelled_instance_type
    from node_labels
    where
        label_name in (
            'nvidia_com_gpu_count',
            'nvidia_com_gpu_product',
            'node_kubernetes_io_instance_type',
            'beta_kubernetes_io_instance_type'
        )
    group by cluster_id, node, usage_date
),

reported as (
    select
        cluster_id,
        node,
        usage_date,
        count(distinct gpu_uuid) as reported_gpu_count,
        max(gpu_model_name) as reported_gpu_model
    from gpu_rows
    group by cluster_id, node, usage_date
),

gpu_nodes as (
    select
        node_costs.cluster_id,
        node_costs.node,
        node_costs.usage_date,
        coalesce(node_costs.instance_type, labelled.labelled_instance_type) as instance_type,
        greatest(
            coalesce(labelled.labelled_gpu_count, 0), coalesce(reported.reported_gpu_count, 0)
        ) as gpu_count,
        coalesce(reported.reported_gpu_model, labelled.labelled_gpu_model) as gpu_model_name
    from node_costs
    left join labelled
        on
            node_costs.cluster_id = labelled.cluster_id
            and node_costs.node = labelled.node
            and node_costs.usage_date = labelled.usage_date
    left join reported
        on
            node_costs.cluster_id = reported.cluster_id
            and node_costs.node = reported.node
            and node_costs.usage_date = reported.usage_date
    where
        coalesce(labelled.labelled_gpu_count, 0) > 0
        or coalesce(reported.reported_gpu_count, 0) > 0
),

-- every share that could apply to a node, ranked: configured instance type, configured GPU
-- model (list order), seed, default
candidate_shares as (
    select
        gpu_nodes.cluster_id,
        gpu_nodes.node,
        gpu_nodes.usage_date,
        1 as share_rank,
        configured_shares.list_position,
        'instance_type_setting' as gpu_share_source,
        configured_shares.gpu_share
    from gpu_nodes
    inner join configured_shares
        on
            configured_shares.match_kind = 'instance_type'
            and lower(gpu_nodes.instance_type) = configured_shares.match_value
    union all
    select
        gpu_nodes.cluster_id,
        gpu_nodes.node,
        gpu_nodes.usage_date,
        2 as share_rank,
        configured_shares.list_position,
        'gpu_model_setting' as gpu_share_source,
        configured_shares.gpu_share
    from gpu_nodes
    inner join configured_shares
        on
            configured_shares.match_kind = 'gpu_model'
            and lower(gpu_nodes.gpu_model_name)
            like {{ dbt.concat(["'%'", 'configured_shares.match_value', "'%'"]) }}
    union all
    select
        gpu_nodes.cluster_id,
        gpu_nodes.node,
        gpu_nodes.usage_date,
        3 as share_rank,
        0 as list_position,
        'instance_type_seed' as gpu_share_source,
        seed_shares.gpu_share
    from gpu_nodes
    inner join seed_shares on lower(gpu_nodes.instance_type) = seed_shares.instance_type
    union all
    select
        gpu_nodes.cluster_id,
        gpu_nodes.node,
        gpu_nodes.usage_date,
        4 as share_rank,
        configured_shares.list_position,
        'default' as gpu_share_source,
        configured_shares.gpu_share
    from gpu_nodes
    cross join configured_shares
    where configured_shares.match_kind = 'default'
),

chosen_shares as (
    select
        cluster_id,
        node,
        usage_date,
        gpu_share_source,
        gpu_share
    from (
        select
            *,
            row_number() over (
                partition by cluster_id, node, usage_date
                order by share_rank, list_position
            ) as share_order
        from candidate_shares
    ) as ranked
    where share_order = 1
),

final as (
    select
        gpu_nodes.cluster_id,
        gpu_nodes.node,
        gpu_nodes.usage_date,
        gpu_nodes.instance_type,
        gpu_nodes.gpu_model_name,
        gpu_nodes.gpu_count,
        chosen_shares.gpu_share,
        chosen_shares.gpu_share_source
    from gpu_nodes
    inner join chosen_shares
        on
            gpu_nodes.cluster_id = chosen_shares.cluster_id
            and gpu_nodes.node = chosen_shares.node
            and gpu_nodes.usage_date = chosen_shares.usage_date
)

select * from final
