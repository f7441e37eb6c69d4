-- One row per label-key alias (SPEC §6): the shipped defaults (seed label_key_aliases:
-- `name` → `app`, `part_of` → `application`), overridden and extended by `labels.aliases`.
-- Configured keys are spelled as label keys are (`normalize_label_key`: `Squad`,
-- `example.com/squad` → `squad`), so an alias matches a normalized pod or selector key.
with

default_aliases as (
    select
        alias_key,
        canonical_key
    from {{ ref('label_key_aliases') }}
),

configured_aliases as (
    select
        {{ normalize_label_key('alias_key') }} as alias_key,
        {{ normalize_label_key('canonical_key') }} as canonical_key
    from {{ source('config', 'label_aliases') }}
),

unioned as (
    select
        cast(alias_key as {{ dbt.type_string() }}) as alias_key,
        cast(canonical_key as {{ dbt.type_string() }}) as canonical_key,
        'config' as alias_source
    from configured_aliases
    union all
    select
        cast(default_aliases.alias_key as {{ dbt.type_string() }}) as alias_key,
        cast(default_aliases.canonical_key as {{ dbt.type_string() }}) as canonical_key,
        'default' as alias_source
    from default_aliases
    left join configured_aliases
        on default_aliases.alias_key = configured_aliases.alias_key
    where configured_aliases.alias_key is null
),

final as (
    select
        alias_key,
        canonical_key,
        alias_source
    from unioned
    -- an alias onto itself would count an unchanged key as rewritten
    where alias_key <> canonical_key
)

select * from final
