-- One row per allocation and charge month on the bill: used (invoiced) cost, the estimate for
-- the whole month, the budget and the thresholds crossed (SPEC §10, reference 004).
--   used       the month's allocation_cost of the lines attributed to the allocation;
--   estimated  used + the daily average of the last `estimate_window_days` (default 7) invoiced
--              days x the days of the month not invoiced yet. The bill is invoiced through
--              its latest charge day (over every account); a month wholly invoiced has
--              estimated = used.
-- A threshold is crossed when used (or, with use_estimated, estimated) cost reaches its
-- percentage of the monthly budget.
with

attributed_lines as (
    select
        allocation_name,
        charge_date,
        charge_month,
        allocation_cost
    from {{ ref('int_cloud_charges_placed') }}
    where placement = 'allocation'
),

bill_lines as (
    select
        charge_date,
        charge_month
    from {{ ref('int_cloud_charges_classified') }}
),

allocations as (
    select
        allocation_name,
        currency,
        monthly_budget
    from {{ ref('stg_config_allocations__allocations') }}
),

thresholds as (
    select
        allocation_name,
        threshold_percent,
        use_estimated
    from {{ ref('stg_config_allocations__thresholds') }}
),

settings as (
    select estimate_window_days from {{ ref('stg_config_allocations__settings') }}
),

-- Allocations no longer configured keep their attributed history.
allocation_names as (
    select allocation_name from allocations
    union
    select distinct allocation_name from attributed_lines
),

months as (
    select distinct charge_month from bill_lines
),

invoiced as (
    select
        max(bill_lines.charge_date) as invoiced_through_date,
        min(bill_lines.charge_date) as first_invoiced_date,
        coalesce(max(settings.estimate_window_days), 7) as estimate_window_days
    from bill_lines
    left join settings on 1 = 1
),

estimate_window as (
    select
        invoiced_through_date,
        window_start_date,
        {{ dbt.datediff('window_start_date', 'invoiced_through_date', 'day') }} + 1  -- noqa: LT05
            as window_days
    from (
        select
            invoiced_through_date,
            greatest(
                first_invoiced_date,
                cast(
                    {{ dbt.dateadd('day', '1 - estimate_window_days', 'invoiced_through_date') }}
                    as date
                )
            ) as window_start_date
        from invoiced
    ) as bounds
),

recent_costs as (
    select
        attributed_lines.allocation_name,
        sum(attributed_lines.allocation_cost) as recent_cost
    from attributed_lines
    inner join estimate_window
        on
            attributed_lines.charge_date >= estimate_window.window_start_date
            and attributed_lines.charge_date <= estimate_window.invoiced_through_date
    group by attributed_lines.allocation_name
),

monthly_costs as (
    select
        allocation_name,
        charge_month,
        sum(allocation_cost) as used_cost,
        count(*) as line_count
    from attributed_lines
    group by allocation_name, charge_month
),

spend as (
    select
        allocation_names.allocation_name,
        months.charge_month,
        allocations.currency,
        allocations.monthly_budget,
        cast(coalesce(monthly_costs.used_cost, 0) as decimal(38, 10)) as used_cost,
        coalesce(monthly_costs.line_count, 0) as line_count,
        estimate_window.invoiced_through_date,
        estimate_window.window_days,
        {{ decimal_divide(
            'coalesce(recent_costs.recent_cost, 0)', 'estimate_window.window_days'
        ) }} as daily_average_cost,
        case
            when estimate_window.invoiced_through_date >= cast(
                {{ dbt.last_day('months.charge_month', 'month') }} as date
            ) then 0
            when estimate_window.invoiced_through_date < months.charge_month
                then {{ days_in_month('months.charge_month') }}
            else {{ dbt.datediff(
                'estimate_window.invoiced_through_date',
                dbt.last_day('months.charge_month', 'month'),
                'day'
            ) }}
        end as days_not_invoiced
    from allocation_names
    cross join months
    cross join estimate_window
    left join allocations on allocation_names.allocation_name = allocations.allocation_name
    left join monthly_costs
        on
            allocation_names.allocation_name = monthly_costs.allocation_name
            and months.charge_month = monthly_costs.charge_month
    left join recent_costs on allocation_names.allocation_name = recent_costs.allocation_name
),

estimated as (
    select
        *,
        cast(used_cost + daily_average_cost * days_not_invoiced as decimal(38, 10))
            as estimated_cost
    from spend
),

threshold_checks as (
    select
        estimated.allocation_name,
        estimated.charge_month,
        thresholds.threshold_percent,
        case
            when thresholds.threshold_percent = floor(thresholds.threshold_percent)
                then cast(cast(thresholds.threshold_percent as bigint) as {{ dbt.type_string() }})
            else cast(thresholds.threshold_percent as {{ dbt.type_string() }})
        end
        || '% of '
        || case when thresholds.use_estimated then 'estimated' else 'used' end
            as threshold_label
    from estimated
    inner join thresholds on estimated.allocation_name = thresholds.allocation_name
    where
        estimated.monthly_budget is not null
        and case
            when thresholds.use_estimated then estimated.estimated_cost
            else estimated.used_cost
        end * 100 >= estimated.monthly_budget * thresholds.threshold_percent
),

crossed as (
    select
        allocation_name,
        charge_month,
        max(threshold_percent) as highest_threshold_percent,
        count(*) as thresholds_crossed_count,
        {{ dbt.listagg('threshold_label', "', '", 'order by threshold_percent, threshold_label') }}
            as thresholds_crossed
    from threshold_checks
    group by allocation_name, charge_month
),

final as (
    select
        estimated.allocation_name,
        estimated.charge_month,
        estimated.currency,
        estimated.monthly_budget,
        estimated.used_cost,
        estimated.estimated_cost,
        estimated.daily_average_cost,
        estimated.invoiced_through_date,
        cast(estimated.days_not_invoiced as integer) as days_not_invoiced,
        cast(estimated.window_days as integer) as estimate_window_days,
        cast(round(
            {{ safe_divide('estimated.used_cost * 100', 'estimated.monthly_budget') }}, 2
        ) as double) as used_pct_of_budget,
        cast(round(
            {{ safe_divide('estimated.estimated_cost * 100', 'estimated.monthly_budget') }}, 2
        ) as double) as estimated_pct_of_budget,
        coalesce(crossed.thresholds_crossed_count, 0) as thresholds_crossed_count,
        crossed.highest_threshold_percent as highest_threshold_pct_of_budget,
        crossed.thresholds_crossed,
        cast(estimated.line_count as bigint) as line_count
    from estimated
    left join crossed
        on
            estimated.allocation_name = crossed.allocation_name
            and estimated.charge_month = crossed.charge_month
)

select * from final
