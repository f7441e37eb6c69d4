-- One row per billing line that carries a tag an attribution rule reads: the value of each
-- role's tag (resource group, deployment, session, project, user). A role with several keys
-- (user: [user, owner]) takes the first configured key the line has; keys are matched lower
-- case, without a `user:` / `user_` prefix and ignoring every character but letters and
-- digits, so `pw-resource-group-id` also matches the AWS tag `user:PWResourceGroupID`.
with

line_tags as (
    select
        billing_line_id,
        tag_key,
        tag_key_normalized,
        tag_value
    from {{ ref('int_billing_line_tags') }}
),

tag_keys as (
    select
        tag_role,
        tag_key_match,
        list_position
    from {{ ref('stg_config_allocations__tag_keys') }}
),

role_values as (
    select
        line_tags.billing_line_id,
        tag_keys.tag_role,
        trim(line_tags.tag_value) as tag_value,
        -- Two raw keys can match one configured key (`user:Project` and `project`): the
        -- first configured key wins, then the alphabetically first raw key.
        row_number() over (
            partition by line_tags.billing_line_id, tag_keys.tag_role
            order by tag_keys.list_position, line_tags.tag_key
        ) as precedence
    from line_tags
    inner join tag_keys
        on replace(line_tags.tag_key_normalized, '_', '') = tag_keys.tag_key_match
    where trim(coalesce(line_tags.tag_value, '')) != ''
),

final as (
    select
        billing_line_id,
        max(case when tag_role = 'resource_group' then tag_value end) as resource_group_tag,
        max(case when tag_role = 'deployment' then tag_value end) as deployment_tag,
        max(case when tag_role = 'session' then tag_value end) as session_tag,
        max(case when tag_role = 'project' then tag_value end) as project_tag,
        max(case when tag_role = 'user' then tag_value end) as user_tag
    from role_values
    where precedence = 1
    group by billing_line_id
)

select * from final
