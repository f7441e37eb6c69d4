-- One row per `exchange_rates:` entry (SPEC §3.3): the rate from a currency into the billing
-- currency in effect from a date on (until the next entry of the same pair).
with

source as (
    select
        from_currency,
        to_currency,
        rate,
        effective_from
    from {{ source('config', 'exchange_rates') }}
),

final as (
    select
        cast(from_currency as {{ dbt.type_string() }}) as from_currency,
        cast(to_currency as {{ dbt.type_string() }}) as to_currency,
        cast(rate as decimal(14, 8)) as rate,
        cast(effective_from as date) as effective_from
    from source
)

select * from final
