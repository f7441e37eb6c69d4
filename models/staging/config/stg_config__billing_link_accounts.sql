-- One row per billing account a cluster's billing link is restricted to.
with

source as (
    select
        cluster_id,
        account_id
    from {{ source('config', 'billing_link_accounts') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(account_id as {{ dbt.type_string() }}) as account_id
    from source
)

select * from final
