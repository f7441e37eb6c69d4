-- One row per rate-card price (SPEC §3.2, §4): the `node_prices:` of kubeledger.yml
-- (config.rate_card) and the rows of rate card CSVs (raw.rate_card), one list. The YAML comes
-- first in list order and wins over a file row for the same selector and date; between files,
-- the latest load wins. `list_position` numbers the prices of a cluster and resource in that
-- order, so "the first label price in list order" has one answer.

with

config_prices as (
    select
        cluster_id,
        resource,
        selector_type,
        selector,
        price,
        unit,
        currency,
        effective_from,
        list_position
    from {{ source('config', 'rate_card') }}
),

file_prices as (
    select
        cluster_id,
        resource,
        selector_type,
        selector,
        price,
        {{ source_column_or_null('rate_card', 'rate_card', 'unit') }} as unit,
        {{ source_column_or_null('rate_card', 'rate_card', 'currency') }} as currency,
        effective_from,
        _source_file,
        _row_number,
        _loaded_at
    from {{ source('rate_card', 'rate_card') }}
),

unioned as (
    select
        'config' as price_source,
        1 as source_precedence,
        trim(cluster_id) as cluster_id,
        lower(trim(resource)) as resource,  -- noqa: RF04
        lower(trim(selector_type)) as selector_type,
        trim(selector) as selector,
        cast(price as double) as price,
        coalesce(nullif(lower(trim(unit)), ''), 'hour') as unit,
        nullif(upper(trim(currency)), '') as currency,
        cast(effective_from as date) as effective_from,
        cast(list_position as {{ dbt.type_bigint() }}) as source_position,
        cast(null as {{ dbt.type_string() }}) as source_file,
        cast(null as {{ dbt.type_bigint() }}) as source_row_number,
        cast(null as timestamp) as loaded_at
    from config_prices
    union all
    select
        'file' as price_source,
        2 as source_precedence,
        trim(cluster_id) as cluster_id,
        lower(trim(resource)) as resource,  -- noqa: RF04
        lower(trim(selector_type)) as selector_type,
        trim(selector) as selector,
        cast(nullif(trim(price), '') as double) as price,
        coalesce(nullif(lower(trim(unit)), ''), 'hour') as unit,
        nullif(upper(trim(currency)), '') as currency,
        cast({{ to_utc_timestamp("nullif(trim(effective_from), '')") }} as date) as effective_from,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_position,
        _source_file as source_file,
        cast(_row_number as {{ dbt.type_bigint() }}) as source_row_number,
        _loaded_at as loaded_at
    from file_prices
),

-- A price without an effective date has always applied.
dated as (
    select
        price_source,
        source_precedence,
        cluster_id,
        resource,
        selector_type,
        selector,
        price,
        unit,
        currency,
        coalesce(effective_from, cast('1970-01-01' as date)) as effective_from,
        source_position,
        source_file,
        source_row_number,
        loaded_at
    from unioned
),

ranked as (
    select
        *,
        row_number() over (
            partition by cluster_id, resource, selector_type, selector, effective_from
            order by
                source_precedence asc,
                loaded_at desc,
                source_file desc,
                source_position desc
        ) as price_rank
    from dated
),

final as (
    select
        cluster_id,
        resource,
        selector_type,
        selector,
        price,
        unit,
        currency,
        effective_from,
        row_number() over (
            partition by cluster_id, resource
            order by source_precedence, source_file, source_position, selector, effective_from
        ) as list_position,
        price_source,
        source_file,
        source_row_number
    from ranked
    where price_rank = 1
)

select * from final
