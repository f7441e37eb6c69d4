-- One row per cluster and UTC day: is the day's ledger built on complete, valid data, and if
-- not, what is missing or wrong (SPEC §11, §13). A quarantined row counts once, on the cluster
-- and day it would have fed, as far as its fields read (a billing line: its account's cluster
-- when the account feeds one); on `__unattributed__` when no cluster reads, on the day it was
-- loaded when no day reads. Failed expectations without a cluster go to `__unattributed__`.
-- The repair window is measured from var('as_of') (the
-- run's date), else the day the build ran.
{%- set expectation_results = source('ops', 'expectation_results') %}
{%- set has_expectation_results = sealed_store_exists([expectation_results]) %}

with

reconciliation as (
    select
        cluster_id,
        usage_date,
        has_usage,
        has_billing,
        is_complete,
        nodes_ran,
        match_ratio,
        is_match_rate_healthy
    from {{ ref('fct_reconciliation_daily') }}
),

node_costs as (
    select
        cluster_id,
        usage_date,
        pricing_basis
    from {{ ref('fct_node_costs_daily') }}
),

cluster_costs as (
    select
        cluster_id,
        usage_date,
        overcommitted_node_hours
    from {{ ref('fct_cluster_costs_daily') }}
),

pod_costs as (
    select
        cluster_id,
        usage_date,
        namespace,
        pod,
        workload_source
    from {{ ref('fct_pod_costs_daily') }}
),

volume_costs as (
    select
        cluster_id,
        usage_date,
        pricing_basis
    from {{ ref('fct_volume_costs_daily') }}
),

scoped_lines as (
    select
        cluster_id,
        billing_account_id
    from {{ ref('int_billing_lines_scoped') }}
),

billing_lines as (
    select
        billing_account_id,
        charge_date,
        is_net_cost_fallback
    from {{ ref('fct_billing_lines') }}
),

settings as (
    select
        repair_window_days,
        rerun_max_days_back
    from {{ ref('stg_config__settings') }}
),

-- one row per quarantined row (a row with several unreadable values counts once), with what
-- of it reads: the cluster and day it would have fed, its billing account
quarantine as (
    select
        _source_file as source_file,
        _row_number as row_number,
        min(_loaded_at) as loaded_at,
        min(_cluster_id) as cluster_id,
        min(usage_date) as usage_date,
        min(billing_account_id) as billing_account_id
    from {{ source('load_audit', 'quarantine') }}
    where not coalesce(row_kept, false)
    group by _source_file, _row_number
),

-- one row per optional value (a unit price, a quantity) that did not read: nulled, its row
-- and cost loaded
nulled_values as (
    select
        _loaded_at as loaded_at,
        _cluster_id as cluster_id,
        usage_date,
        billing_account_id
    from {{ source('load_audit', 'quarantine') }}
    where coalesce(row_kept, false)
),

-- typed and empty until the first Dagster run creates the ops schema
expectation_results as (
    select
        cast(null as {{ dbt.type_string() }}) as cluster_id,
        cast(null as date) as usage_date,
        cast(null as {{ dbt.type_string() }}) as raw_table,
        cast(null as {{ dbt.type_string() }}) as description,
        cast(null as {{ dbt.type_bigint() }}) as unexpected_count
    where 1 = 0
    {%- if has_expectation_results %}
    union all
    select
        cluster_id,
        usage_date,
        raw_table,
        description,
        unexpected_count
    from {{ expectation_results }}
    {%- endif %}
),

as_of as (
    select {{ close_as_of_date() }} as as_of_date
),

-- a billing account that feeds exactly one cluster: a quarantined line of it feeds that one
account_clusters as (
    select
        billing_account_id,
        min(cluster_id) as cluster_id
    from scoped_lines
    where billing_account_id is not null
    group by billing_account_id
    having count(distinct cluster_id) = 1
),

quarantined as (
    select
        coalesce(
            quarantine.cluster_id, account_clusters.cluster_id, '__unattributed__'
        ) as cluster_id,
        coalesce(quarantine.usage_date, cast(quarantine.loaded_at as date)) as usage_date,
        count(*) as quarantined_rows
    from quarantine
    left join account_clusters
        on quarantine.billing_account_id = account_clusters.billing_account_id
    group by
        coalesce(quarantine.cluster_id, account_clusters.cluster_id, '__unattributed__'),
        coalesce(quarantine.usage_date, cast(quarantine.loaded_at as date))
),

nulled as (
    select
        coalesce(
            nulled_values.cluster_id, account_clusters.cluster_id, '__unattributed__'
        ) as cluster_id,
        coalesce(nulled_values.usage_date, cast(nulled_values.loaded_at as date)) as usage_date,
        count(*) as unreadable_optional_values
    from nulled_values
    left join account_clusters
        on nulled_values.billing_account_id = account_clusters.billing_account_id
    group by
        coalesce(nulled_values.cluster_id, account_clusters.cluster_id, '__unattributed__'),
        coalesce(nulled_values.usage_date, cast(nulled_values.loaded_at as date))
),

failed_expectations as (
    select
        coalesce(cluster_id, '__unattributed__') as cluster_id,
        usage_date,
        count(*) as failed_expectations,
        sum(unexpected_count) as failed_expectation_rows,
        {{ dbt.listagg(
            "raw_table || ': ' || description",
            "'; '",
            "order by raw_table, description",
        ) }} as failed_expectation_list
    from expectation_results
    where usage_date is not null
    group by coalesce(cluster_id, '__unattributed__'), usage_date
),

pricing_bases as (
    select
        cluster_id,
        usage_date,
        sum(case when pricing_basis = 'bill' then 1 else 0 end) as node_days_from_bill,
        sum(case when pricing_basis = 'estimate' then 1 else 0 end) as node_days_on_estimate,
        sum(case when pricing_basis = 'rate_card' then 1 else 0 end) as node_days_from_rate_card,
        sum(case when pricing_basis = 'unpriced' then 1 else 0 end) as node_days_unpriced
    from node_costs
    group by cluster_id, usage_date
),

unpriced_volumes as (
    select
        cluster_id,
        usage_date,
        count(*) as unpriced_volumes
    from volume_costs
    where pricing_basis = 'unpriced'
    group by cluster_id, usage_date
),

pod_name_fallbacks as (
    select
        cluster_id,
        usage_date,
        -- a pod with platform and user hours has two rows
        count(distinct {{ dbt.concat(['namespace', "'/'", 'pod']) }}) as pod_name_fallback_pods
    from pod_costs
    where workload_source = 'pod_name_fallback'
    group by cluster_id, usage_date
),

cluster_accounts as (
    select distinct
        cluster_id,
        billing_account_id
    from scoped_lines
    where billing_account_id is not null
),

net_cost_fallbacks as (
    select
        cluster_accounts.cluster_id,
        billing_lines.charge_date as usage_date,
        count(*) as net_cost_fallback_lines
    from billing_lines
    inner join cluster_accounts
        on billing_lines.billing_account_id = cluster_accounts.billing_account_id
    where billing_lines.is_net_cost_fallback
    group by cluster_accounts.cluster_id, billing_lines.charge_date
),

cluster_days as (
    select
        cluster_id,
        usage_date
    from reconciliation
    union
    select
        cluster_id,
        usage_date
    from quarantined
    union
    select
        cluster_id,
        usage_date
    from nulled
    union
    select
        cluster_id,
        usage_date
    from failed_expectations
),

joined as (
    select
        cluster_days.cluster_id,
        cluster_days.usage_date,
        coalesce(reconciliation.has_usage, false) as has_usage,
        coalesce(reconciliation.has_billing, false) as has_billing,
        coalesce(reconciliation.is_complete, false) as is_complete,
        coalesce(reconciliation.nodes_ran, 0) as nodes_ran,
        coalesce(pricing_bases.node_days_from_bill, 0) as node_days_from_bill,
        coalesce(pricing_bases.node_days_on_estimate, 0) as node_days_on_estimate,
        coalesce(pricing_bases.node_days_from_rate_card, 0) as node_days_from_rate_card,
        coalesce(pricing_bases.node_days_unpriced, 0) as node_days_unpriced,
        coalesce(unpriced_volumes.unpriced_volumes, 0) as unpriced_volumes,
        reconciliation.match_ratio,
        coalesce(reconciliation.is_match_rate_healthy, true) as is_match_rate_healthy,
        coalesce(cluster_costs.overcommitted_node_hours, 0) as overcommitted_node_hours,
        coalesce(quarantined.quarantined_rows, 0) as quarantined_rows,
        coalesce(nulled.unreadable_optional_values, 0) as unreadable_optional_values,
        coalesce(pod_name_fallbacks.pod_name_fallback_pods, 0) as pod_name_fallback_pods,
        coalesce(net_cost_fallbacks.net_cost_fallback_lines, 0) as net_cost_fallback_lines,
        coalesce(failed_expectations.failed_expectations, 0) as failed_expectations,
        coalesce(failed_expectations.failed_expectation_rows, 0) as failed_expectation_rows,
        failed_expectations.failed_expectation_list,
        {{ dbt.datediff('cluster_days.usage_date', 'as_of.as_of_date', 'day') }} as days_ago,  -- noqa: LT05
        settings.repair_window_days,
        settings.rerun_max_days_back
    from cluster_days
    cross join settings
    cross join as_of
    left join reconciliation
        on
            cluster_days.cluster_id = reconciliation.cluster_id
            and cluster_days.usage_date = reconciliation.usage_date
    left join pricing_bases
        on
            cluster_days.cluster_id = pricing_bases.cluster_id
            and cluster_days.usage_date = pricing_bases.usage_date
    left join unpriced_volumes
        on
            cluster_days.cluster_id = unpriced_volumes.cluster_id
            and cluster_days.usage_date = unpriced_volumes.usage_date
    left join cluster_costs
        on
            cluster_days.cluster_id = cluster_costs.cluster_id
            and cluster_days.usage_date = cluster_costs.usage_date
    left join quarantined
        on
            cluster_days.cluster_id = quarantined.cluster_id
            and cluster_days.usage_date = quarantined.usage_date
    left join nulled
        on
            cluster_days.cluster_id = nulled.cluster_id
            and cluster_days.usage_date = nulled.usage_date
    left join pod_name_fallbacks
        on
            cluster_days.cluster_id = pod_name_fallbacks.cluster_id
            and cluster_days.usage_date = pod_name_fallbacks.usage_date
    left join net_cost_fallbacks
        on
            cluster_days.cluster_id = net_cost_fallbacks.cluster_id
            and cluster_days.usage_date = net_cost_fallbacks.usage_date
    left join failed_expectations
        on
            cluster_days.cluster_id = failed_expectations.cluster_id
            and cluster_days.usage_date = failed_expectations.usage_date
),

final as (
    select
        cast(cluster_id as {{ dbt.type_string() }}) as cluster_id,
        cast(usage_date as date) as usage_date,
        cast(has_usage as {{ dbt.type_boolean() }}) as has_usage,
        cast(has_billing as {{ dbt.type_boolean() }}) as has_billing,
        cast(is_complete as {{ dbt.type_boolean() }}) as is_complete,
        cast(nodes_ran as {{ dbt.type_bigint() }}) as nodes_ran,
        cast(node_days_from_bill as {{ dbt.type_bigint() }}) as node_days_from_bill,
        cast(node_days_on_estimate as {{ dbt.type_bigint() }}) as node_days_on_estimate,
        cast(node_days_from_rate_card as {{ dbt.type_bigint() }}) as node_days_from_rate_card,
        cast(node_days_unpriced as {{ dbt.type_bigint() }}) as node_days_unpriced,
        cast(unpriced_volumes as {{ dbt.type_bigint() }}) as unpriced_volumes,
        cast(match_ratio as double) as match_ratio,
        cast(is_match_rate_healthy as {{ dbt.type_boolean() }}) as is_match_rate_healthy,
        cast(overcommitted_node_hours as {{ dbt.type_bigint() }}) as overcommitted_node_hours,
        cast(quarantined_rows as {{ dbt.type_bigint() }}) as quarantined_rows,
        cast(
            unreadable_optional_values as {{ dbt.type_bigint() }}
        ) as unreadable_optional_values,
        cast(pod_name_fallback_pods as {{ dbt.type_bigint() }}) as pod_name_fallback_pods,
        cast(net_cost_fallback_lines as {{ dbt.type_bigint() }}) as net_cost_fallback_lines,
        cast(failed_expectations as {{ dbt.type_bigint() }}) as failed_expectations,
        cast(failed_expectation_rows as {{ dbt.type_bigint() }}) as failed_expectation_rows,
        cast(failed_expectation_list as {{ dbt.type_string() }}) as failed_expectation_list,
        cast(days_ago as integer) as days_ago,
        cast(
            case
                when days_ago <= repair_window_days then 'automatic'
                when days_ago <= rerun_max_days_back then 'manual'
                else 'expired'
            end as {{ dbt.type_string() }}
        ) as repair_window,
        cast(
            not has_usage
            or not has_billing
            or not is_complete
            or not is_match_rate_healthy
            or node_days_unpriced > 0
            or quarantined_rows > 0
            or failed_expectations > 0 as {{ dbt.type_boolean() }}
        ) as needs_attention
    from joined
)

select * from final
