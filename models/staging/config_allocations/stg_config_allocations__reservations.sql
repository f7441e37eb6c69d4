-- One row per reservation (capacity reservation, capacity block, reservation) mapped to an
-- allocation, with the lower-case key a billing line's resource ID is matched on.
with

source as (
    select
        reservation_id,
        reservation_key,
        allocation_name,
        list_position
    from {{ source('config_allocations', 'cloud_charge_reservations') }}
),

final as (
    select
        cast(reservation_id as {{ dbt.type_string() }}) as reservation_id,
        lower(cast(reservation_key as {{ dbt.type_string() }})) as reservation_key,
        cast(allocation_name as {{ dbt.type_string() }}) as allocation_name,
        cast(list_position as integer) as list_position
    from source
)

select * from final
