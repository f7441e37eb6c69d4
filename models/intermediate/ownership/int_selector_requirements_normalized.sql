-- One row per requirement of a label selector mapping (SPEC §6 rule 1), its key normalized by
-- exactly the rule pod label keys go through (`label_key_mapping`: lower case, the operator's
-- `label_` prefix and DNS prefixes dropped, separators folded, then the aliases), so
-- `app.kubernetes.io/name in (cart)` looks at the label pods carry as `app`, and `squad` at
-- `team` when `squad` is an alias of it.
with

selector_requirements as (
    select
        list_position,
        requirement_position,
        cluster_id,
        selector_key,
        operator,
        label_values,
        team,
        cost_center,
        application,
        effective_from
    from {{ ref('stg_config__selector_mappings') }}
),

label_dns_prefixes as (
    select sanitized_prefix from {{ ref('stg_config__label_dns_prefixes') }}
),

label_aliases as (
    select
        alias_key,
        canonical_key
    from {{ ref('stg_config__label_aliases') }}
),

selector_keys as (
    select distinct selector_key as raw_label_key
    from selector_requirements
),

key_mapping as (
    {{ label_key_mapping('selector_keys', 'label_dns_prefixes', 'label_aliases') }}
),

final as (
    select
        selector_requirements.list_position,
        selector_requirements.requirement_position,
        selector_requirements.cluster_id,
        selector_requirements.selector_key,
        key_mapping.label_key,
        selector_requirements.operator,
        selector_requirements.label_values,
        selector_requirements.team,
        selector_requirements.cost_center,
        selector_requirements.application,
        selector_requirements.effective_from
    from selector_requirements
    inner join key_mapping on selector_requirements.selector_key = key_mapping.raw_label_key
)

select * from final
