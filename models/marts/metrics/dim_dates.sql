-- One row per UTC day from 2020-01-01 to 2035-12-31: the calendar the semantic layer's time
-- dimension joins to (MetricFlow's time spine), and a date dimension for BI tools.
with

days as (
    {{ dbt.date_spine(
        'day',
        "cast('2020-01-01' as date)",
        "cast('2036-01-01' as date)"
    ) }}
),

final as (
    select
        cast(date_day as date) as date_day,
        cast({{ dbt.date_trunc('month', 'date_day') }} as date) as date_month
    from days
)

select * from final
