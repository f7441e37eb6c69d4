-- One row per budget allocation (kubeledger.yml `cloud_charges.allocations`).
with

source as (
    select
        allocation_name,
        currency,
        monthly_budget,
        list_position
    from {{ source('config_allocations', 'cloud_charge_allocations') }}
),

final as (
    select
        cast(allocation_name as {{ dbt.type_string() }}) as allocation_name,
        -- The legacy project-tag rule compares names ignoring case.
        lower(cast(allocation_name as {{ dbt.type_string() }})) as allocation_name_lower,
        upper(cast(currency as {{ dbt.type_string() }})) as currency,
        cast(monthly_budget as decimal(38, 2)) as monthly_budget,
        cast(list_position as integer) as list_position
    from source
)

select * from final
