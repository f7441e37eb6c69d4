-- One row per run that re-allocated days (SPEC §11): when, which days, why and by whom.
{%- set rerun_log = source('ops', 'rerun_log') %}

with

-- typed and empty until the first Dagster run creates the ops schema
runs as (
    select
        cast(null as {{ dbt.type_string() }}) as run_id,
        cast(null as {{ dbt.type_string() }}) as job_name,
        cast(null as {{ dbt.type_timestamp() }}) as started_at,
        cast(null as {{ dbt.type_timestamp() }}) as finished_at,
        cast(null as date) as first_day,
        cast(null as date) as last_day,
        cast(null as integer) as day_count,
        cast(null as {{ dbt.type_string() }}) as reason,
        cast(null as {{ dbt.type_string() }}) as requested_by,
        cast(null as date) as as_of_date,
        cast(null as {{ dbt.type_string() }}) as status
    where 1 = 0
    {%- if sealed_store_exists([rerun_log]) %}
    union all
    select
        run_id,
        job_name,
        started_at,
        finished_at,
        first_day,
        last_day,
        day_count,
        reason,
        requested_by,
        as_of_date,
        status
    from {{ rerun_log }}
    {%- endif %}
),

durations as (
    select
        *,
        {{ dbt.datediff('started_at', 'finished_at', 'second') }} as duration_seconds  -- noqa: LT05
    from runs
),

final as (
    select
        cast(run_id as {{ dbt.type_string() }}) as run_id,
        cast(job_name as {{ dbt.type_string() }}) as job_name,
        cast(started_at as {{ dbt.type_timestamp() }}) as started_at,
        cast(finished_at as {{ dbt.type_timestamp() }}) as finished_at,
        cast(first_day as date) as first_day,
        cast(last_day as date) as last_day,
        cast(day_count as integer) as day_count,
        cast(reason as {{ dbt.type_string() }}) as reason,
        cast(requested_by as {{ dbt.type_string() }}) as requested_by,
        cast(as_of_date as date) as as_of_date,
        cast(status as {{ dbt.type_string() }}) as status,
        cast(duration_seconds as {{ dbt.type_bigint() }}) as duration_seconds
    from durations
)

select * from final
