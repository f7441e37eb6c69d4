-- One row per configured GPU share (`gpu.shares` in list order, then the `default` row):
-- match values lower-cased, so instance types and GPU models match case-insensitively.
with

source as (
    select
        list_position,
        match_kind,
        match_value,
        gpu_share
    from {{ source('config', 'gpu_cost_shares') }}
),

final as (
    select
        cast(list_position as integer) as list_position,
        cast(match_kind as {{ dbt.type_string() }}) as match_kind,
        cast(lower(trim(match_value)) as {{ dbt.type_string() }}) as match_value,
        cast(gpu_share as double) as gpu_share
    from source
)

select * from final
