-- One row per cluster, node and hour the node ran (SPEC §5): its capacity, the fraction f_h
-- of the hour it ran (capacity core-seconds / (cores × 3600), below 1 for a node that came up
-- or went away mid-hour) and its role. Capacity repeats on every pod row of a node-hour, so it
-- is taken once (max). The role is the operator's `node_role` when any pod row of the hour
-- carries one, else the node's labels that day (`node-role.kubernetes.io/control-plane`,
-- `…/master`, `…/infra`), else `worker`.
{{ config(**incremental_by_day('usage_date')) }}

with

pod_usage as (
    select
        cluster_id,
        usage_date,
        interval_start,
        interval_end,
        node,
        node_capacity_cpu_cores,
        node_capacity_cpu_core_seconds,
        node_capacity_memory_bytes,
        node_capacity_memory_byte_seconds,
        node_role,
        resource_id
    from {{ ref('stg_koku__pod_usage') }}
    where {{ day_range_filter('usage_date', source_day='source_day') }}
),

node_labels as (
    select
        cluster_id,
        usage_date,
        node,
        raw_label_key,
        label_value
    from {{ ref('int_node_labels_daily') }}
    where {{ day_range_filter('usage_date') }}
),

-- Roles rank control plane first, then infra, then worker, so that one control-plane signal
-- makes a node a control-plane node.
pod_rows_roles as (
    select
        cluster_id,
        usage_date,
        interval_start,
        interval_end,
        node,
        node_capacity_cpu_cores,
        node_capacity_cpu_core_seconds,
        node_capacity_memory_bytes,
        node_capacity_memory_byte_seconds,
        case {{ normalize_node_role('node_role') }}
            when 'control_plane' then 1
            when 'infra' then 2
            when 'worker' then 3
        end as reported_role_rank,
        resource_id
    from pod_usage
),

node_hours_reported as (
    select
        cluster_id,
        node,
        usage_date,
        interval_start,
        max(interval_end) as interval_end,
        max(node_capacity_cpu_cores) as capacity_cpu_cores,
        max(node_capacity_cpu_core_seconds) as capacity_cpu_core_seconds,
        max(node_capacity_memory_bytes) as capacity_memory_bytes,
        max(node_capacity_memory_byte_seconds) as capacity_memory_byte_seconds,
        min(reported_role_rank) as reported_role_rank,
        max(resource_id) as resource_id,
        count(*) as pod_row_count
    from pod_rows_roles
    group by cluster_id, node, usage_date, interval_start
),

label_roles as (
    select
        cluster_id,
        usage_date,
        node,
        min(
            case {{ node_role_from_label('raw_label_key', 'label_value') }}
                when 'control_plane' then 1
                when 'infra' then 2
                when 'worker' then 3
            end
        ) as label_role_rank
    from node_labels
    group by cluster_id, usage_date, node
),

node_hours_roled as (
    select
        node_hours_reported.*,
        coalesce(
            node_hours_reported.reported_role_rank, label_roles.label_role_rank, 3
        ) as role_rank,
        case
            when node_hours_reported.reported_role_rank is not null then 'report'
            when label_roles.label_role_rank is not null then 'labels'
            else 'default'
        end as node_role_source,
        {{ safe_divide(
            'node_hours_reported.capacity_cpu_core_seconds',
            'node_hours_reported.capacity_cpu_cores * 3600'
        ) }} as capacity_hour_ratio
    from node_hours_reported
    left join label_roles
        on
            node_hours_reported.cluster_id = label_roles.cluster_id
            and node_hours_reported.usage_date = label_roles.usage_date
            and node_hours_reported.node = label_roles.node
),

final as (
    select
        cluster_id,
        node,
        usage_date,
        interval_start,
        interval_end,
        capacity_cpu_cores,
        capacity_cpu_core_seconds,
        capacity_memory_bytes,
        capacity_memory_byte_seconds,
        -- a rounding overshoot of the operator's seconds must not make f_h exceed 1;
        -- a real excess is flagged for data health
        least(capacity_hour_ratio, 1.0) as hour_fraction,
        capacity_hour_ratio > 1.000001 as is_capacity_over_hour,
        case role_rank
            when 1 then 'control_plane'
            when 2 then 'infra'
            else 'worker'
        end as node_role,
        node_role_source,
        resource_id,
        pod_row_count
    from node_hours_roled
)

select * from final
