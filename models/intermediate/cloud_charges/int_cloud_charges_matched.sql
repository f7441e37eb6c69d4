-- One row per billing line that the attribution rules decide (line_class `rules`): the first
-- rule that matches under the current configuration (SPEC §10, reference 004):
--   1 reservation      the line's resource ID is a mapped reservation (equal to the configured
--                      ID or ARN, or ending in `/<id>` or `:<id>`), ignoring case;
--   2 resource_group   the resource-group tag names a group whose allocation history has an
--                      entry at the charge's start time (a change applies from its timestamp
--                      on, so earlier charges keep the earlier allocation whenever they are
--                      imported);
--   3 deployment       the deployment tag (else the session tag) names a deployment whose
--                      resource group has an entry at that time;
--   4 project_tag      the project tag equals an allocation's name ignoring case, and no other
--                      allocation has the same name ignoring case;
--   5 account_default  the account's default allocation, from its start date on (the line's
--                      sub-account's entry first, then its billing account's);
--   6 unattributed     none of these, with the reason.
-- int_cloud_charges_attributed pins these results per charge month.
with

rule_lines as (
    select
        billing_line_id,
        billing_account_id,
        sub_account_id,
        charge_date,
        charge_at,
        charge_month,
        resource_key
    from {{ ref('int_cloud_charges_classified') }}
    where line_class = 'rules'
),

line_tags as (
    select
        billing_line_id,
        resource_group_tag,
        deployment_tag,
        session_tag,
        project_tag
    from {{ ref('int_cloud_charge_tags_pivoted') }}
),

allocations as (
    select
        allocation_name,
        allocation_name_lower
    from {{ ref('stg_config_allocations__allocations') }}
),

reservations as (
    select
        reservation_id,
        reservation_key,
        allocation_name,
        list_position
    from {{ ref('stg_config_allocations__reservations') }}
),

resource_group_allocations as (
    select
        resource_group_id,
        allocation_name,
        effective_at
    from {{ ref('stg_config_allocations__resource_group_allocations') }}
),

deployments as (
    select
        deployment_id,
        resource_group_id
    from {{ ref('stg_config_allocations__deployments') }}
),

accounts as (
    select
        account_id,
        default_allocation_name,
        default_allocation_start_date
    from {{ ref('stg_config_allocations__accounts') }}
),

tagged_lines as (
    select
        rule_lines.*,
        line_tags.resource_group_tag,
        line_tags.deployment_tag,
        line_tags.session_tag,
        lower(line_tags.project_tag) as project_tag_lower
    from rule_lines
    left join line_tags on rule_lines.billing_line_id = line_tags.billing_line_id
),

-- Rule 1. Two mappings can match one line (an ID and its ARN): the first listed wins.
{%- set key_tail = dbt.right(
    'tagged_lines.resource_key', 'length(reservations.reservation_key) + 1'
) %}
reservation_matches as (
    select
        tagged_lines.billing_line_id,
        reservations.reservation_id,
        reservations.allocation_name,
        row_number() over (
            partition by tagged_lines.billing_line_id
            order by reservations.list_position
        ) as precedence
    from tagged_lines
    inner join reservations
        on
            tagged_lines.resource_key = reservations.reservation_key
            or {{ key_tail }} = '/' || reservations.reservation_key
            or {{ key_tail }} = ':' || reservations.reservation_key
),

resource_group_periods as (
    select
        resource_group_id,
        allocation_name,
        effective_at,
        lead(effective_at) over (
            partition by resource_group_id
            order by effective_at
        ) as next_effective_at
    from resource_group_allocations
),

configured_groups as (
    select distinct resource_group_id
    from resource_group_allocations
),

-- Rule 3's deployment: the deployment tag's deployment, else the session tag's.
line_deployments as (
    select
        tagged_lines.billing_line_id,
        coalesce(by_deployment_tag.deployment_id, by_session_tag.deployment_id)
            as deployment_id,
        case
            when by_deployment_tag.deployment_id is not null
                then by_deployment_tag.resource_group_id
            else by_session_tag.resource_group_id
        end as resource_group_id
    from tagged_lines
    left join deployments as by_deployment_tag
        on tagged_lines.deployment_tag = by_deployment_tag.deployment_id
    left join deployments as by_session_tag
        on tagged_lines.session_tag = by_session_tag.deployment_id
    where
        by_deployment_tag.deployment_id is not null
        or by_session_tag.deployment_id is not null
),

-- Rules 2 and 3: the group's allocation in effect at the charge's start.
group_matches as (
    select
        tagged_lines.billing_line_id,
        by_tag.allocation_name as tag_allocation_name,
        line_deployments.deployment_id,
        line_deployments.resource_group_id as deployment_resource_group_id,
        by_deployment.allocation_name as deployment_allocation_name
    from tagged_lines
    left join resource_group_periods as by_tag
        on
            tagged_lines.resource_group_tag = by_tag.resource_group_id
            and tagged_lines.charge_at >= by_tag.effective_at
            and (
                by_tag.next_effective_at is null
                or tagged_lines.charge_at < by_tag.next_effective_at
            )
    left join line_deployments on tagged_lines.billing_line_id = line_deployments.billing_line_id
    left join resource_group_periods as by_deployment
        on
            line_deployments.resource_group_id = by_deployment.resource_group_id
            and tagged_lines.charge_at >= by_deployment.effective_at
            and (
                by_deployment.next_effective_at is null
                or tagged_lines.charge_at < by_deployment.next_effective_at
            )
),

-- Rule 4: names that differ only in case make the tag ambiguous, so neither matches.
project_names as (
    select
        allocation_name_lower,
        min(allocation_name) as allocation_name,
        count(*) as allocation_count
    from allocations
    group by allocation_name_lower
),

-- Rule 5: the sub-account's entry first, then the billing account's.
account_defaults as (
    select
        tagged_lines.billing_line_id,
        accounts.account_id,
        accounts.default_allocation_name,
        row_number() over (
            partition by tagged_lines.billing_line_id
            order by case when accounts.account_id = tagged_lines.sub_account_id then 1 else 2 end
        ) as precedence
    from tagged_lines
    inner join accounts
        on
            accounts.account_id in (tagged_lines.sub_account_id, tagged_lines.billing_account_id)
            and accounts.default_allocation_name is not null
            and tagged_lines.charge_date >= accounts.default_allocation_start_date
),

accounts_not_started as (
    select distinct tagged_lines.billing_line_id
    from tagged_lines
    inner join accounts
        on
            accounts.account_id in (tagged_lines.sub_account_id, tagged_lines.billing_account_id)
            and accounts.default_allocation_name is not null
            and tagged_lines.charge_date < accounts.default_allocation_start_date
),

matched as (
    select
        tagged_lines.billing_line_id,
        tagged_lines.charge_month,
        tagged_lines.resource_group_tag,
        tagged_lines.deployment_tag,
        tagged_lines.session_tag,
        tagged_lines.project_tag_lower,
        reservation_matches.reservation_id,
        reservation_matches.allocation_name as reservation_allocation_name,
        group_matches.tag_allocation_name,
        group_matches.deployment_id,
        group_matches.deployment_resource_group_id,
        group_matches.deployment_allocation_name,
        project_names.allocation_name as project_name_match,
        project_names.allocation_count as project_name_count,
        account_defaults.account_id as default_account_id,
        account_defaults.default_allocation_name,
        configured_groups.resource_group_id is not null as is_configured_group,
        accounts_not_started.billing_line_id is not null as is_before_account_default
    from tagged_lines
    left join reservation_matches
        on
            tagged_lines.billing_line_id = reservation_matches.billing_line_id
            and reservation_matches.precedence = 1
    left join group_matches on tagged_lines.billing_line_id = group_matches.billing_line_id
    left join project_names on tagged_lines.project_tag_lower = project_names.allocation_name_lower
    left join account_defaults
        on
            tagged_lines.billing_line_id = account_defaults.billing_line_id
            and account_defaults.precedence = 1
    left join configured_groups
        on tagged_lines.resource_group_tag = configured_groups.resource_group_id
    left join accounts_not_started
        on tagged_lines.billing_line_id = accounts_not_started.billing_line_id
),

final as (
    select
        billing_line_id,
        charge_month,
        case
            when reservation_allocation_name is not null then 'reservation'
            when tag_allocation_name is not null then 'resource_group'
            when deployment_allocation_name is not null then 'deployment'
            when project_name_count = 1 then 'project_tag'
            when default_allocation_name is not null then 'account_default'
            else 'unattributed'
        end as attribution_rule,
        case
            when reservation_allocation_name is not null then reservation_allocation_name
            when tag_allocation_name is not null then tag_allocation_name
            when deployment_allocation_name is not null then deployment_allocation_name
            when project_name_count = 1 then project_name_match
            else default_allocation_name
        end as allocation_name,
        case when reservation_allocation_name is not null then reservation_id end
            as reservation_id,
        case
            when reservation_allocation_name is not null then null
            when tag_allocation_name is not null then resource_group_tag
            when deployment_allocation_name is not null then deployment_resource_group_id
        end as resource_group_id,
        deployment_id,
        case
            when
                reservation_allocation_name is null
                and tag_allocation_name is null
                and deployment_allocation_name is null
                and coalesce(project_name_count, 0) != 1
                then default_account_id
        end as default_account_id,
        case
            when
                reservation_allocation_name is not null
                or tag_allocation_name is not null
                or deployment_allocation_name is not null
                or project_name_count = 1
                or default_allocation_name is not null
                then null
            when resource_group_tag is not null and not is_configured_group
                then 'unknown_resource_group'
            when resource_group_tag is not null then 'resource_group_not_funded_at_charge_time'
            when deployment_id is not null then 'deployment_without_funded_resource_group'
            when deployment_tag is not null or session_tag is not null then 'unknown_deployment'
            when project_name_count > 1 then 'ambiguous_project_tag'
            when project_tag_lower is not null then 'unknown_project_tag'
            when is_before_account_default then 'before_account_default_start'
            else 'no_rule_matched'
        end as unattributed_reason
    from matched
)

select * from final
