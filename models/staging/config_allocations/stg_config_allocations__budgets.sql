-- One row per budget, of either kind (SPEC §10, one mechanism): a cloud-charge allocation's
-- (`cloud_charges.allocations`, with a monthly_budget) and an owner's (`budgets.owners`: a team,
-- cost center or application). budget_kind says which; owner_value is what the cost is matched
-- on (the allocation's name, or the owner's value).
with

allocations as (
    select
        allocation_name,
        currency,
        monthly_budget
    from {{ source('config_allocations', 'cloud_charge_allocations') }}
    where monthly_budget is not null
),

owners as (
    select
        budget_name,
        owner_dimension,
        owner_value,
        currency,
        monthly_budget
    from {{ source('config_allocations', 'owner_budgets') }}
),

unioned as (
    select
        'allocation:' || allocation_name as budget_name,
        'allocation' as budget_kind,
        allocation_name as owner_value,
        currency,
        monthly_budget
    from allocations
    union all
    select
        budget_name,
        owner_dimension as budget_kind,
        owner_value,
        currency,
        monthly_budget
    from owners
),

final as (
    select
        cast(budget_name as {{ dbt.type_string() }}) as budget_name,
        cast(budget_kind as {{ dbt.type_string() }}) as budget_kind,
        cast(owner_value as {{ dbt.type_string() }}) as owner_value,
        cast(currency as {{ dbt.type_string() }}) as currency,
        cast(monthly_budget as decimal(38, 2)) as monthly_budget
    from unioned
)

select * from final
