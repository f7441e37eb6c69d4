-- One row per configured cluster.
with

source as (
    select
        cluster_id,
        provider,
        has_billing_link,
        currency,
        default_team,
        default_cost_center,
        default_application,
        cluster_arn
    from {{ source('config', 'clusters') }}
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        lower(cast(provider as {{ dbt.type_string() }})) as provider,  -- noqa: RF04
        cast(has_billing_link as boolean) as has_billing_link,
        cast(currency as {{ dbt.type_string() }}) as currency,
        cast(default_team as {{ dbt.type_string() }}) as default_team,
        cast(default_cost_center as {{ dbt.type_string() }}) as default_cost_center,
        cast(default_application as {{ dbt.type_string() }}) as default_application,
        -- the EKS cluster ARN its control-plane fee rows carry, when the link names one
        lower(cast(cluster_arn as {{ dbt.type_string() }})) as cluster_arn
    from source
)

select * from final
