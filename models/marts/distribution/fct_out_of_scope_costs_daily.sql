-- One row per billing account, UTC day and out-of-scope category: cost on the same billing
-- accounts as the clusters that is in no cluster's scope (SPEC §8), never mixed into the
-- reconciliation figures. Categories: `billed_no_agent` (resources tagged for a Kubernetes
-- cluster that sends no usage data), `data_transfer` (node data transfer, unless
-- network.include_data_transfer), `account_level` (tax, credits, refunds, fees, discounts,
-- commitment purchases), `other_service` (managed databases and everything else).
with

billing_lines as (
    select
        billing_line_id,
        provider,
        billing_account_id,
        charge_date,
        service_name,
        resource_type,
        charge_category,
        counts_as_resource_cost,
        is_data_transfer,
        is_split_cost_row,
        effective_cost
    from {{ ref('int_billing_lines_unioned') }}
),

scoped as (
    select
        billing_line_id,
        cluster_id,
        provider,
        billing_account_id
    from {{ ref('int_billing_lines_scoped') }}
),

line_tags as (
    select
        billing_line_id,
        tag_key_normalized
    from {{ ref('int_billing_line_tags') }}
),

-- accounts that carry at least one cluster's in-scope lines
cluster_accounts as (
    select distinct
        provider,
        billing_account_id
    from scoped
),

kubernetes_tagged as (
    select distinct billing_line_id
    from line_tags
    where
        tag_key_normalized like 'kubernetes_io_cluster_%'
        or tag_key_normalized in (
            'goog_k8s_cluster_name', 'aks_managed_cluster_name', 'eks_cluster_name'
        )
),

out_of_scope as (
    select
        billing_lines.billing_account_id,
        billing_lines.charge_date,
        case
            when billing_lines.is_split_cost_row then 'eks_split_cost'
            when
                billing_lines.charge_category != 'usage'
                or not billing_lines.counts_as_resource_cost
                then 'account_level'
            when billing_lines.is_data_transfer then 'data_transfer'
            when kubernetes_tagged.billing_line_id is not null then 'billed_no_agent'
            else 'other_service'
        end as out_of_scope_category,
        billing_lines.service_name,
        billing_lines.effective_cost
    from billing_lines
    inner join cluster_accounts
        on
            billing_lines.provider = cluster_accounts.provider
            and billing_lines.billing_account_id = cluster_accounts.billing_account_id
    left join scoped on billing_lines.billing_line_id = scoped.billing_line_id
    left join kubernetes_tagged
        on billing_lines.billing_line_id = kubernetes_tagged.billing_line_id
    where scoped.billing_line_id is null
),

final as (
    select
        billing_account_id,
        charge_date as usage_date,
        out_of_scope_category,
        service_name,
        count(*) as billing_line_count,
        cast(sum(effective_cost) as decimal(38, 10)) as out_of_scope_cost
    from out_of_scope
    group by billing_account_id, charge_date, out_of_scope_category, service_name
)

select * from final
