-- SPEC §3.3: a line with an exchange rate was in another currency than the billing currency
-- and is now in the billing currency; a line without one keeps its currency and amounts as
-- the source wrote them. Returns the lines that break either rule.
with

settings as (
    select upper(trim(currency)) as billing_currency
    from {{ ref('stg_config__settings') }}
),

lines as (
    select
        billing_line_id,
        currency,
        source_currency,
        exchange_rate,
        list_cost,
        billed_cost,
        effective_cost,
        source_list_cost,
        source_billed_cost,
        source_effective_cost
    from {{ ref('fct_billing_lines') }}
),

final as (
    select lines.*
    from lines
    cross join settings
    where
        (
            lines.exchange_rate is null
            and (
                lines.currency is distinct from lines.source_currency
                or lines.list_cost is distinct from lines.source_list_cost
                or lines.billed_cost is distinct from lines.source_billed_cost
                or lines.effective_cost is distinct from lines.source_effective_cost
            )
        )
        or (
            lines.exchange_rate is not null
            and (
                lines.exchange_rate <= 0
                or lines.currency != settings.billing_currency
                or upper(trim(lines.source_currency)) = settings.billing_currency
            )
        )
)

select * from final
