-- One row per budget threshold of an allocation: a percentage of its monthly budget, checked
-- against used (invoiced) or estimated cost.
with

source as (
    select
        allocation_name,
        threshold_percent,
        use_estimated,
        list_position
    from {{ source('config_allocations', 'cloud_charge_thresholds') }}
),

final as (
    select
        cast(allocation_name as {{ dbt.type_string() }}) as allocation_name,
        cast(threshold_percent as double) as threshold_percent,
        cast(use_estimated as boolean) as use_estimated,
        cast(list_position as integer) as list_position
    from source
)

select * from final
