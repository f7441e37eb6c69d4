{{ config(**incremental_by_day('usage_date')) }}

-- One row per cost object and day: its team, cost center and application, each resolved
-- independently by the first rule that gives a value (SPEC §6): 1 a label selector mapping, in
-- list order; 2 the workload's own labels (key lists from the owner_label_keys seed, in key
-- order); 3 a namespace mapping, 4 the namespace's own labels by the same keys; 5 the cluster
-- default; else none (unowned). Generated-looking label values never become owners. Volumes
-- and load balancers without a pod start at rule 3. `<dimension>_source` says which rule won.
-- A pod that was platform for some hours has two cost rows (int_cost_objects_daily) and one
-- owner row.
with

objects as (
    select distinct
        cluster_id,
        usage_date,
        namespace,
        object_kind,
        object_name
    from {{ ref('int_cost_objects_daily') }}
    where {{ day_range_filter('usage_date') }}
),

pod_labels as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        label_key,
        label_value
    from {{ ref('int_pod_labels_daily') }}
    where {{ day_range_filter('usage_date') }}
),

namespace_labels as (
    select
        cluster_id,
        usage_date,
        namespace,
        label_key,
        label_value
    from {{ ref('int_namespace_labels_daily') }}
    where {{ day_range_filter('usage_date') }}
),

owner_keys as (
    select
        owner_dimension,
        label_key,
        key_order
    from {{ ref('owner_label_keys') }}
),

selector_requirements as (
    select
        list_position,
        cluster_id,
        label_key,
        operator,
        label_values,
        team,
        cost_center,
        application,
        effective_from
    from {{ ref('int_selector_requirements_normalized') }}
),

namespace_mappings as (
    select
        cluster_id,
        namespace,
        team,
        cost_center,
        application,
        effective_from
    from {{ ref('stg_config__namespace_mappings') }}
),

clusters as (
    select
        cluster_id,
        default_team,
        default_cost_center,
        default_application
    from {{ ref('stg_config__clusters') }}
),

dimensions as (
    select 'team' as owner_dimension
    union all
    select 'cost_center' as owner_dimension
    union all
    select 'application' as owner_dimension
),

pod_objects as (
    select * from objects
    where object_kind = 'pod'
),

-- 1: label selector mappings, in list order, with Kubernetes selector semantics: every
-- requirement of a mapping must hold; `notin` (and `!=`) and `!key` also match a pod without
-- the key. Keys are normalized like the pods' (int_selector_requirements_normalized).
requirement_checks as (
    select
        pod_objects.cluster_id,
        pod_objects.usage_date,
        pod_objects.namespace,
        pod_objects.object_kind,
        pod_objects.object_name,
        selector_requirements.list_position,
        selector_requirements.team,
        selector_requirements.cost_center,
        selector_requirements.application,
        case selector_requirements.operator
            when 'exists' then pod_labels.label_value is not null
            when 'not_exists' then pod_labels.label_value is null
            when 'in'
                then
                    pod_labels.label_value is not null
                    and instr(
                        '|' || selector_requirements.label_values || '|',
                        '|' || pod_labels.label_value || '|'
                    ) > 0
            when 'notin'
                then
                    pod_labels.label_value is null
                    or instr(
                        '|' || selector_requirements.label_values || '|',
                        '|' || pod_labels.label_value || '|'
                    ) = 0
            else false
        end as is_met
    from pod_objects
    inner join selector_requirements
        on
            (
                selector_requirements.cluster_id is null
                or pod_objects.cluster_id = selector_requirements.cluster_id
            )
            and pod_objects.usage_date >= selector_requirements.effective_from
    left join pod_labels
        on
            pod_objects.cluster_id = pod_labels.cluster_id
            and pod_objects.usage_date = pod_labels.usage_date
            and pod_objects.namespace = pod_labels.namespace
            and pod_objects.object_name = pod_labels.pod
            and selector_requirements.label_key = pod_labels.label_key
),

matched_selectors as (
    select
        cluster_id,
        usage_date,
        namespace,
        object_kind,
        object_name,
        list_position,
        team,
        cost_center,
        application
    from requirement_checks
    group by
        cluster_id,
        usage_date,
        namespace,
        object_kind,
        object_name,
        list_position,
        team,
        cost_center,
        application
    having min(case when is_met then 1 else 0 end) = 1
),

selector_candidates as (
    select
        matched_selectors.cluster_id,
        matched_selectors.usage_date,
        matched_selectors.namespace,
        matched_selectors.object_kind,
        matched_selectors.object_name,
        dimensions.owner_dimension,
        case dimensions.owner_dimension
            when 'team' then matched_selectors.team
            when 'cost_center' then matched_selectors.cost_center
            else matched_selectors.application
        end as owner_value,
        1 as rule_rank,
        matched_selectors.list_position as sub_rank,
        'selector_mapping' as owner_source
    from matched_selectors
    cross join dimensions
),

-- 2: the workload's own labels
workload_label_candidates as (
    select
        pod_objects.cluster_id,
        pod_objects.usage_date,
        pod_objects.namespace,
        pod_objects.object_kind,
        pod_objects.object_name,
        owner_keys.owner_dimension,
        pod_labels.label_value as owner_value,
        2 as rule_rank,
        owner_keys.key_order as sub_rank,
        'workload_label' as owner_source
    from pod_objects
    inner join pod_labels
        on
            pod_objects.cluster_id = pod_labels.cluster_id
            and pod_objects.usage_date = pod_labels.usage_date
            and pod_objects.namespace = pod_labels.namespace
            and pod_objects.object_name = pod_labels.pod
    inner join owner_keys on pod_labels.label_key = owner_keys.label_key
    where not {{ is_generated_value('pod_labels.label_value') }}
),

-- 3: a namespace mapping (a cluster's own mapping before one for every cluster; the latest
-- in effect)
namespace_mapping_candidates as (
    select
        objects.cluster_id,
        objects.usage_date,
        objects.namespace,
        objects.object_kind,
        objects.object_name,
        dimensions.owner_dimension,
        case dimensions.owner_dimension
            when 'team' then namespace_mappings.team
            when 'cost_center' then namespace_mappings.cost_center
            else namespace_mappings.application
        end as owner_value,
        3 as rule_rank,
        row_number() over (
            partition by
                objects.cluster_id,
                objects.usage_date,
                objects.namespace,
                objects.object_kind,
                objects.object_name,
                dimensions.owner_dimension
            order by
                case when namespace_mappings.cluster_id is null then 1 else 0 end,
                namespace_mappings.effective_from desc
        ) as sub_rank,
        'namespace_mapping' as owner_source
    from objects
    inner join namespace_mappings
        on
            objects.namespace = namespace_mappings.namespace
            and (
                namespace_mappings.cluster_id is null
                or objects.cluster_id = namespace_mappings.cluster_id
            )
            and objects.usage_date >= namespace_mappings.effective_from
    cross join dimensions
),

-- 4: the namespace's own labels
namespace_label_candidates as (
    select
        objects.cluster_id,
        objects.usage_date,
        objects.namespace,
        objects.object_kind,
        objects.object_name,
        owner_keys.owner_dimension,
        namespace_labels.label_value as owner_value,
        4 as rule_rank,
        owner_keys.key_order as sub_rank,
        'namespace_label' as owner_source
    from objects
    inner join namespace_labels
        on
            objects.cluster_id = namespace_labels.cluster_id
            and objects.usage_date = namespace_labels.usage_date
            and objects.namespace = namespace_labels.namespace
    inner join owner_keys on namespace_labels.label_key = owner_keys.label_key
    where not {{ is_generated_value('namespace_labels.label_value') }}
),

-- 5: the cluster default
default_candidates as (
    select
        objects.cluster_id,
        objects.usage_date,
        objects.namespace,
        objects.object_kind,
        objects.object_name,
        dimensions.owner_dimension,
        case dimensions.owner_dimension
            when 'team' then clusters.default_team
            when 'cost_center' then clusters.default_cost_center
            else clusters.default_application
        end as owner_value,
        5 as rule_rank,
        0 as sub_rank,
        'cluster_default' as owner_source
    from objects
    inner join clusters on objects.cluster_id = clusters.cluster_id
    cross join dimensions
),

candidates as (
    select * from selector_candidates
    union all
    select * from workload_label_candidates
    union all
    select * from namespace_mapping_candidates
    union all
    select * from namespace_label_candidates
    union all
    select * from default_candidates
),

winners as (
    select
        *,
        row_number() over (
            partition by
                cluster_id, usage_date, namespace, object_kind, object_name, owner_dimension
            order by rule_rank, sub_rank, owner_value
        ) as precedence
    from candidates
    where owner_value is not null and owner_value != ''
),

final as (
    select
        objects.cluster_id,
        objects.usage_date,
        objects.namespace,
        objects.object_kind,
        objects.object_name,
        team.owner_value as team,
        coalesce(team.owner_source, 'none') as team_source,
        cost_center.owner_value as cost_center,
        coalesce(cost_center.owner_source, 'none') as cost_center_source,
        application.owner_value as application,
        coalesce(application.owner_source, 'none') as application_source
    from objects
    {% for dimension in ['team', 'cost_center', 'application'] %}
        left join winners as {{ dimension }}
            on
                objects.cluster_id = {{ dimension }}.cluster_id
                and objects.usage_date = {{ dimension }}.usage_date
                and objects.namespace = {{ dimension }}.namespace
                and objects.object_kind = {{ dimension }}.object_kind
                and objects.object_name = {{ dimension }}.object_name
                and {{ dimension }}.owner_dimension = '{{ dimension }}'
                and {{ dimension }}.precedence = 1
    {% endfor %}
)

select * from final
