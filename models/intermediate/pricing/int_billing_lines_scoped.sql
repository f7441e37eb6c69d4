-- The scope model (SPEC §4): one row per billing line that is in a cluster's scope. Every later
-- figure (node costs, daily reconciliation, unallocated list, monthly targets) sums this model.
with

billing_lines as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        sub_account_id,
        charge_date,
        resource_id,
        resource_key,
        resource_type,
        service_category,
        pricing_category,
        instance_type,
        region,
        usage_hours,
        effective_cost,
        coalesce(amortized_commitment_cost, 0) as amortized_commitment_cost,
        counts_as_resource_cost,
        is_compute_instance_usage,
        is_data_transfer,
        is_control_plane_fee,
        case
            when resource_key like '%/virtualmachinescalesets/%'
                then regexp_extract(resource_key, 'virtualmachinescalesets/([^/]+)', 1)
            else resource_key
        end as match_key
    from {{ ref('int_billing_lines_unioned') }}
),

line_tags as (
    select
        billing_line_id,
        tag_key_normalized,
        tag_value
    from {{ ref('int_billing_line_tags') }}
),

clusters as (
    select
        cluster_id,
        has_billing_link,
        cluster_arn
    from {{ ref('stg_config__clusters') }}
),

link_accounts as (
    select
        cluster_id,
        account_id
    from {{ ref('stg_config__billing_link_accounts') }}
),

link_tags as (
    select
        cluster_id,
        tag_key_normalized,
        tag_value
    from {{ ref('stg_config__billing_link_tags') }}
),

link_patterns as (
    select
        cluster_id,
        pattern
    from {{ ref('stg_config__billing_link_patterns') }}
),

settings as (
    select include_data_transfer from {{ ref('stg_config__settings') }}
),

cluster_resources as (
    select
        cluster_id,
        resource_type,
        match_key
    from {{ ref('int_cluster_resources') }}
),

-- Only lines that are a resource's own cost can be in scope: an instance's compute usage
-- (data transfer only when turned on), a volume's or a load balancer's usage, and managed
-- control-plane fees. Fees, negations, split-cost rows, tax and credits never are.
candidate_lines as (
    select
        billing_lines.*,
        case
            when billing_lines.is_control_plane_fee then 'compute'
            when billing_lines.resource_type = 'instance' and billing_lines.is_data_transfer
                then 'network'
            when billing_lines.resource_type = 'instance' then 'compute'
            when billing_lines.resource_type = 'volume' then 'storage'
            when billing_lines.resource_type = 'load_balancer' then 'network'
        end as cost_family
    from billing_lines
    cross join settings
    where
        billing_lines.is_control_plane_fee
        or (
            billing_lines.counts_as_resource_cost
            and (
                billing_lines.is_compute_instance_usage
                or billing_lines.resource_type in ('volume', 'load_balancer')
                or (
                    billing_lines.resource_type = 'instance'
                    and billing_lines.is_data_transfer
                    and settings.include_data_transfer
                )
            )
        )
),

-- Lines whose resource is one of a cluster's nodes, volumes or load balancers.
matched as (
    select
        candidate_lines.billing_line_id,
        min(cluster_resources.cluster_id) as cluster_id
    from candidate_lines
    inner join cluster_resources
        on
            candidate_lines.match_key = cluster_resources.match_key
            and candidate_lines.resource_type = cluster_resources.resource_type
    where not candidate_lines.is_data_transfer
    group by candidate_lines.billing_line_id
),

-- Joins rather than correlated subqueries: Spark cannot plan an EXISTS in a join condition.
link_account_clusters as (
    select distinct cluster_id from link_accounts
),

-- Managed control-plane fees matched by the cluster's resource ID (SPEC §4): an EKS fee row's
-- resource is the cluster ARN `arn:aws:eks:<region>:<account>:cluster/<name>` and it carries no
-- cluster tag (AKS: `…/managedclusters/<name>`, GKE: `…/clusters/<name>`). The ARN the billing
-- link gives wins; else the name is the cluster's ID, in the link's accounts when it lists any.
fee_lines as (
    select
        billing_line_id,
        billing_account_id,
        sub_account_id,
        resource_key,
        regexp_extract(
            resource_key,
            '(?:^arn:aws[a-z-]*:eks:[^:]*:[^:]*:cluster/|/managedclusters/|/clusters/)([^/]+)$',
            1
        ) as fee_cluster_name
    from candidate_lines
    where is_control_plane_fee
),

fee_matched_candidates as (
    select
        fee_lines.billing_line_id,
        clusters.cluster_id
    from fee_lines
    inner join clusters on fee_lines.resource_key = clusters.cluster_arn
    union
    select
        fee_lines.billing_line_id,
        clusters.cluster_id
    from fee_lines
    inner join clusters
        on
            clusters.cluster_arn is null
            and fee_lines.fee_cluster_name = lower(clusters.cluster_id)
    left join link_account_clusters on clusters.cluster_id = link_account_clusters.cluster_id
    left join link_accounts as fee_accounts
        on
            clusters.cluster_id = fee_accounts.cluster_id
            and (
                fee_accounts.account_id = fee_lines.billing_account_id
                or fee_accounts.account_id = fee_lines.sub_account_id
            )
    where link_account_clusters.cluster_id is null or fee_accounts.cluster_id is not null
),

fee_matched as (
    select
        billing_line_id,
        min(cluster_id) as cluster_id
    from fee_matched_candidates
    group by billing_line_id
),

linked_clusters as (
    select
        clusters.cluster_id,
        link_account_clusters.cluster_id is not null as has_accounts
    from clusters
    left join link_account_clusters on clusters.cluster_id = link_account_clusters.cluster_id
    where clusters.has_billing_link
),

tag_selected as (
    select distinct
        link_tags.cluster_id,
        line_tags.billing_line_id
    from link_tags
    inner join line_tags
        on
            link_tags.tag_key_normalized = line_tags.tag_key_normalized
            and (link_tags.tag_value is null or link_tags.tag_value = line_tags.tag_value)
),

-- Each pattern is tried once per distinct resource ID, not once per line (a pattern that is a
-- column is compiled for every row it meets).
resource_keys as (
    select distinct lower(resource_key) as resource_key_lower
    from candidate_lines
),

pattern_keys as (
    select distinct
        link_patterns.cluster_id,
        resource_keys.resource_key_lower
    from link_patterns
    inner join resource_keys
        on {{ regexp_matches('resource_keys.resource_key_lower', 'link_patterns.pattern') }}
),

pattern_selected as (
    select distinct
        pattern_keys.cluster_id,
        candidate_lines.billing_line_id
    from pattern_keys
    inner join candidate_lines
        on lower(candidate_lines.resource_key) = pattern_keys.resource_key_lower
),

link_selected as (
    select
        cluster_id,
        billing_line_id
    from tag_selected
    union
    select
        cluster_id,
        billing_line_id
    from pattern_selected
),

-- The billing link's filter: accounts only restrict (billing account or sub-account), tags and
-- patterns select (SPEC §3.3). A link with accounts and no tag or pattern selects nothing
-- here: its cluster's lines are those matched to its own nodes, volumes and load balancers.
selected_in_accounts as (
    select distinct
        link_selected.cluster_id,
        link_selected.billing_line_id
    from link_selected
    inner join linked_clusters on link_selected.cluster_id = linked_clusters.cluster_id
    inner join candidate_lines
        on link_selected.billing_line_id = candidate_lines.billing_line_id
    left join link_accounts
        on
            link_selected.cluster_id = link_accounts.cluster_id
            and (
                link_accounts.account_id = candidate_lines.billing_account_id
                or link_accounts.account_id = candidate_lines.sub_account_id
            )
    where not linked_clusters.has_accounts or link_accounts.account_id is not null
),

selected as (
    select
        billing_line_id,
        min(cluster_id) as cluster_id
    from selected_in_accounts
    group by billing_line_id
),

scoped as (
    select
        candidate_lines.*,
        coalesce(matched.cluster_id, fee_matched.cluster_id, selected.cluster_id) as cluster_id,
        case
            when matched.cluster_id is not null then 'matched'
            when candidate_lines.is_control_plane_fee then 'platform_fee'
            when candidate_lines.is_data_transfer then 'unattributed_network'
            else 'unallocated'
        end as scope_status
    from candidate_lines
    left join matched on candidate_lines.billing_line_id = matched.billing_line_id
    left join fee_matched on candidate_lines.billing_line_id = fee_matched.billing_line_id
    left join selected on candidate_lines.billing_line_id = selected.billing_line_id
    where
        matched.cluster_id is not null
        or fee_matched.cluster_id is not null
        or selected.cluster_id is not null
),

final as (
    select
        billing_line_id,
        cluster_id,
        charge_date,
        cost_family,
        resource_type,
        -- the resource as the bill writes it (for lists); resource_key and match_key are the
        -- normalized forms every join uses
        resource_id,
        resource_key,
        match_key,
        scope_status,
        case when scope_status = 'unallocated' then 'no_kubernetes_object' end
            as unallocated_reason,
        provider,
        billing_account_id,
        sub_account_id,
        pricing_category,
        instance_type,
        region,
        usage_hours,
        is_control_plane_fee,
        -- A GCP instance's share of its account's committed-use fee is part of its cost.
        cast(effective_cost + amortized_commitment_cost as decimal(38, 10)) as effective_cost
    from scoped
)

select * from final
