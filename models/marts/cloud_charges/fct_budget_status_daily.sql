{#- A view on DuckDB, so a seal shows here as soon as it is written; a table on Spark, whose
    Derby metastore cannot hold a view's text this long (LONG VARCHAR, 32,672 characters): there
    a seal shows after the next build. -#}
{{ config(materialized='table' if target.type == 'spark' else 'view') }}
{#- converted into a budget's own currency when it is not the billing currency -#}
{%- set amounts_in_cost_currency = [
    'daily_cost', 'used_cost', 'recent_daily_average_cost', 'forecast_cost'
] %}

-- One row per budget and day (SPEC §10: teams, cost centers, applications and cloud-charge
-- allocations have budgets by one mechanism): the month's used cost to that day, the forecast
-- for the whole month, and the thresholds crossed.
--   used      owner budgets: on the last day of a sealed month the owner's billed amount on
--             the sealed bill (rpt_owner_bill_explained), else its ledger cost
--             (fct_owner_costs_daily, after distribution) from the first of the month through
--             the day; allocations: the allocation_cost of the lines attributed to it through
--             the day;
--   forecast  used + the recent daily average (the last `estimate_window_days` days, default
--             7, ending on the day; fewer at the start of the data) x the days of the month
--             after it.
-- A threshold is crossed when used (or, with use_estimated, forecast) cost reaches its
-- percentage of the monthly budget; newly_crossed names those crossed that day and not the
-- day before. A view, so a seal shows here as soon as it is written.
-- Currency: the costs are in the billing currency (`currency:`, cost_currency). A budget in
-- another currency has its amounts converted into it by the `exchange_rates:` rate from the
-- budget's currency in effect on the status day (the ledger's rule: the latest starting on or
-- before the day): amount / rate. A day no rate covers shows no amounts and
-- is_missing_exchange_rate, never the billing-currency figure as if it were the budget's.
with

budgets as (
    select
        budget_name,
        budget_kind,
        owner_value,
        currency,
        monthly_budget
    from {{ ref('stg_config_allocations__budgets') }}
),

thresholds as (
    select
        budget_name,
        threshold_percent,
        use_estimated
    from {{ ref('stg_config_allocations__budget_thresholds') }}
),

settings as (
    select estimate_window_days from {{ ref('stg_config_allocations__settings') }}
),

billing as (
    select upper(trim(currency)) as cost_currency
    from {{ ref('stg_config__settings') }}
),

exchange_rates as (
    select
        from_currency,
        to_currency,
        rate,
        effective_from
    from {{ ref('stg_config__exchange_rates') }}
),

owner_costs as (
    select
        usage_date,
        team,
        cost_center,
        application,
        total_cost
    from {{ ref('fct_owner_costs_daily') }}
),

sealed_parts as (
    select
        bill_month as month_start_date,
        team,
        cost_center,
        application,
        billed_cost
    from {{ ref('rpt_owner_bill_explained') }}
    where bill_state = 'sealed'
),

allocation_lines as (
    select
        allocation_name,
        charge_date,
        allocation_cost
    from {{ ref('int_cloud_charges_placed') }}
    where placement = 'allocation'
),

calendar as (
    select date_day from {{ ref('dim_dates') }}
),

-- cost per budget and day, in the source each kind of budget reads
owner_daily as (
    select
        budgets.budget_name,
        owner_costs.usage_date as cost_date,
        sum(cast(owner_costs.total_cost as decimal(38, 12))) as daily_cost
    from budgets
    inner join owner_costs
        on
            (budgets.budget_kind = 'team' and owner_costs.team = budgets.owner_value)
            or (
                budgets.budget_kind = 'cost_center'
                and owner_costs.cost_center = budgets.owner_value
            )
            or (
                budgets.budget_kind = 'application'
                and owner_costs.application = budgets.owner_value
            )
    group by
        budgets.budget_name,
        owner_costs.usage_date
),

allocation_daily as (
    select
        budgets.budget_name,
        allocation_lines.charge_date as cost_date,
        sum(cast(allocation_lines.allocation_cost as decimal(38, 12))) as daily_cost
    from budgets
    inner join allocation_lines
        on
            budgets.budget_kind = 'allocation'
            and allocation_lines.allocation_name = budgets.owner_value
    group by
        budgets.budget_name,
        allocation_lines.charge_date
),

daily_costs as (
    select * from owner_daily
    union all
    select * from allocation_daily
),

sealed_months as (
    select
        budgets.budget_name,
        sealed_parts.month_start_date,
        sum(sealed_parts.billed_cost) as sealed_cost
    from budgets
    inner join sealed_parts
        on
            (budgets.budget_kind = 'team' and sealed_parts.team = budgets.owner_value)
            or (
                budgets.budget_kind = 'cost_center'
                and sealed_parts.cost_center = budgets.owner_value
            )
            or (
                budgets.budget_kind = 'application'
                and sealed_parts.application = budgets.owner_value
            )
    group by
        budgets.budget_name,
        sealed_parts.month_start_date
),

-- the days each kind of budget is checked on: from the first to the last day of its source
kind_spans as (
    select
        'owner' as source_kind,
        min(usage_date) as first_date,
        max(usage_date) as last_date
    from owner_costs
    union all
    select
        'allocation' as source_kind,
        min(charge_date) as first_date,
        max(charge_date) as last_date
    from allocation_lines
),

budget_days as (
    select
        budgets.budget_name,
        calendar.date_day as status_date,
        cast({{ dbt.date_trunc('month', 'calendar.date_day') }} as date) as budget_month,
        kind_spans.first_date
    from budgets
    inner join kind_spans
        on
            kind_spans.source_kind
            = case when budgets.budget_kind = 'allocation' then 'allocation' else 'owner' end
    inner join calendar
        on
            calendar.date_day
            >= cast({{ dbt.date_trunc('month', 'kind_spans.first_date') }} as date)
            and calendar.date_day <= kind_spans.last_date
),

to_date as (
    select
        budget_days.budget_name,
        budget_days.status_date,
        budget_days.budget_month,
        coalesce(sum(
            case
                when daily_costs.cost_date = budget_days.status_date then daily_costs.daily_cost
            end
        ), 0) as daily_cost,
        coalesce(sum(
            case
                when daily_costs.cost_date >= budget_days.budget_month then daily_costs.daily_cost
            end
        ), 0) as ledger_cost,
        coalesce(sum(
            case
                when
                    daily_costs.cost_date
                    > cast({{ dbt.dateadd(
                        'day', '0 - settings.estimate_window_days', 'budget_days.status_date'
                    ) }} as date)
                    then daily_costs.daily_cost
            end
        ), 0) as recent_cost,
        -- the window has no days before the source's first: its average is over those it has
        max(least(
            settings.estimate_window_days,
            {{ dbt.datediff('budget_days.first_date', 'budget_days.status_date', 'day') }} + 1  -- noqa: LT05
        )) as window_days
    from budget_days
    cross join settings
    left join daily_costs
        on
            budget_days.budget_name = daily_costs.budget_name
            and daily_costs.cost_date <= budget_days.status_date
            and daily_costs.cost_date
            >= least(
                budget_days.budget_month,
                cast({{ dbt.dateadd(
                    'day', '1 - settings.estimate_window_days', 'budget_days.status_date'
                ) }} as date)
            )
    group by
        budget_days.budget_name,
        budget_days.status_date,
        budget_days.budget_month
),

-- a sealed month's last day shows the sealed amount (the bill of record); its other days the
-- ledger cost to date
month_ends as (
    select
        to_date.*,
        to_date.status_date
        = cast({{ dbt.last_day('to_date.budget_month', 'month') }} as date) as is_month_end
    from to_date
),

status as (
    select
        month_ends.budget_name,
        budgets.budget_kind,
        budgets.owner_value,
        month_ends.status_date,
        month_ends.budget_month,
        budgets.currency,
        budgets.monthly_budget,
        case
            when sealed_months.sealed_cost is not null then 'sealed'
            when budgets.budget_kind = 'allocation' then 'invoiced'
            else 'ledger'
        end as used_basis,
        cast(month_ends.daily_cost as decimal(38, 6)) as daily_cost,
        -- both cast first: a coalesce of decimal(38, 2) and decimal(38, 12) keeps 2 decimals
        coalesce(
            cast(sealed_months.sealed_cost as decimal(38, 6)),
            cast(month_ends.ledger_cost as decimal(38, 6))
        ) as used_cost,
        {{ decimal_divide('month_ends.recent_cost', 'month_ends.window_days', 6) }}
            as recent_daily_average_cost,
        {{ dbt.datediff(
            'month_ends.status_date', dbt.last_day('month_ends.budget_month', 'month'), 'day'
        ) }} as remaining_days
    from month_ends
    inner join budgets on month_ends.budget_name = budgets.budget_name
    left join sealed_months
        on
            month_ends.budget_name = sealed_months.budget_name
            and month_ends.budget_month = sealed_months.month_start_date
            and month_ends.is_month_end
),

in_cost_currency as (
    select
        *,
        cast(used_cost + recent_daily_average_cost * remaining_days as decimal(38, 6))
            as forecast_cost
    from status
),

-- the rate from each budget's currency into the billing currency on each status day (one
-- per from/to/effective_from, so no tie); none needed when the budget is in the billing
-- currency
day_rates as (
    {{ rates_in_effect(
        'in_cost_currency', ['budget_name', 'status_date'], 'status_date',
        'billing', 'billing.cost_currency'
    ) }}
),

forecast as (
    select
        in_cost_currency.budget_name,
        in_cost_currency.budget_kind,
        in_cost_currency.owner_value,
        in_cost_currency.status_date,
        in_cost_currency.budget_month,
        in_cost_currency.currency,
        billing.cost_currency,
        day_rates.rate as exchange_rate,
        upper(trim(in_cost_currency.currency)) <> billing.cost_currency
        and day_rates.rate is null as is_missing_exchange_rate,
        {% for amount in amounts_in_cost_currency %}
            case
                when upper(trim(in_cost_currency.currency)) = billing.cost_currency
                    then in_cost_currency.{{ amount }}
                else
                    {{ decimal_divide(
                        'in_cost_currency.' ~ amount, 'day_rates.rate', 6, 'half_up'
                    ) }}
            end as {{ amount }},
        {% endfor %}
        in_cost_currency.monthly_budget,
        in_cost_currency.used_basis,
        in_cost_currency.remaining_days
    from in_cost_currency
    cross join billing
    left join day_rates
        on
            in_cost_currency.budget_name = day_rates.budget_name
            and in_cost_currency.status_date = day_rates.status_date
),

threshold_checks as (
    select
        forecast.budget_name,
        forecast.status_date,
        forecast.budget_month,
        thresholds.threshold_percent,
        case
            when thresholds.threshold_percent = floor(thresholds.threshold_percent)
                then cast(cast(thresholds.threshold_percent as bigint) as {{ dbt.type_string() }})
            else cast(thresholds.threshold_percent as {{ dbt.type_string() }})
        end
        || '% of '
        || case when thresholds.use_estimated then 'forecast' else 'used' end
            as threshold_label,
        -- no amount (no exchange rate on the day) crosses nothing
        coalesce(
            case
                when thresholds.use_estimated then forecast.forecast_cost
                else forecast.used_cost
            end * 100 >= forecast.monthly_budget * thresholds.threshold_percent,
            false
        ) as is_crossed
    from forecast
    inner join thresholds on forecast.budget_name = thresholds.budget_name
),

threshold_changes as (
    select
        *,
        coalesce(
            lag(is_crossed) over (
                partition by budget_name, budget_month, threshold_label
                order by status_date
            ),
            false
        ) as was_crossed
    from threshold_checks
),

crossed as (
    select
        budget_name,
        status_date,
        max(case when is_crossed then threshold_percent end) as highest_threshold_percent,
        sum(case when is_crossed then 1 else 0 end) as thresholds_crossed_count,
        {{ dbt.listagg(
            'case when is_crossed then threshold_label end', "', '",
            'order by threshold_percent, threshold_label'
        ) }} as thresholds_crossed,
        {{ dbt.listagg(
            'case when is_crossed and not was_crossed then threshold_label end', "', '",
            'order by threshold_percent, threshold_label'
        ) }} as newly_crossed
    from threshold_changes
    group by
        budget_name,
        status_date
),

final as (
    select
        cast(
            {{ dbt.concat(['forecast.budget_name', "'|'",
                dbt.cast('forecast.status_date', dbt.type_string())]) }}
            as {{ dbt.type_string() }}
        ) as budget_day_id,
        cast(forecast.budget_name as {{ dbt.type_string() }}) as budget_name,
        cast(forecast.budget_kind as {{ dbt.type_string() }}) as budget_kind,
        cast(forecast.owner_value as {{ dbt.type_string() }}) as owner_value,
        cast(forecast.status_date as date) as status_date,
        cast(forecast.budget_month as date) as budget_month,
        cast(forecast.currency as {{ dbt.type_string() }}) as currency,
        cast(forecast.cost_currency as {{ dbt.type_string() }}) as cost_currency,
        cast(forecast.exchange_rate as decimal(14, 8)) as exchange_rate,
        cast(forecast.is_missing_exchange_rate as boolean) as is_missing_exchange_rate,
        cast(forecast.monthly_budget as decimal(38, 2)) as monthly_budget,
        cast(forecast.used_basis as {{ dbt.type_string() }}) as used_basis,
        cast(forecast.daily_cost as decimal(38, 6)) as daily_cost,
        cast(forecast.used_cost as decimal(38, 6)) as used_cost,
        cast(forecast.recent_daily_average_cost as decimal(38, 6)) as recent_daily_average_cost,
        cast(forecast.remaining_days as integer) as remaining_days,
        cast(forecast.forecast_cost as decimal(38, 6)) as forecast_cost,
        cast(round(
            {{ safe_divide('forecast.used_cost * 100', 'forecast.monthly_budget') }}, 2
        ) as double) as used_pct_of_budget,
        cast(round(
            {{ safe_divide('forecast.forecast_cost * 100', 'forecast.monthly_budget') }}, 2
        ) as double) as forecast_pct_of_budget,
        cast(coalesce(crossed.thresholds_crossed_count, 0) as integer) as thresholds_crossed_count,
        cast(crossed.highest_threshold_percent as double)
            as highest_threshold_pct_of_budget,
        cast(nullif(crossed.thresholds_crossed, '') as {{ dbt.type_string() }})
            as thresholds_crossed,
        cast(nullif(crossed.newly_crossed, '') as {{ dbt.type_string() }}) as newly_crossed
    from forecast
    left join crossed
        on
            forecast.budget_name = crossed.budget_name
            and forecast.status_date = crossed.status_date
)

select * from final
