{#- One row per billing line decided by the attribution rules: the rule and allocation it was
    attributed with, pinned per charge month (SPEC §10 "reprocessing").

    Configuration is rebuilt from kubeledger.yml on every run, so without pinning a changed
    default allocation would silently move the charges of every past month. Instead this model
    is incremental by charge month and only (re)writes months that changed:
      - a line not attributed yet (new, or re-delivered under a new billing_line_id) gets the
        current rules' result (int_cloud_charges_matched);
      - a line attributed before keeps its rule and allocation, as long as it is on the bill;
      - months that lost lines are rewritten without them;
      - `--vars '{reattribute_month: "2026-09"}'` reprocesses one month: its leftover lines
        (account_default and unattributed) are attributed again under the current
        configuration; its other lines, and every other month, keep their attribution.
    A full refresh attributes every month again under the current configuration. -#}
{{ config(**incremental_by_period('charge_month')) }}

{%- set reattribute_month = var('reattribute_month', none) -%}
{%- if reattribute_month is not none
    and not modules.re.match('^[0-9]{4}-(0[1-9]|1[0-2])$', reattribute_month | string) -%}
    {{ exceptions.raise_compiler_error(
        "var reattribute_month must be YYYY-MM (e.g. 2026-09), got '"
        ~ reattribute_month ~ "'"
    ) }}
{%- endif %}

with

matched as (
    select
        billing_line_id,
        charge_month,
        attribution_rule,
        allocation_name,
        reservation_id,
        resource_group_id,
        deployment_id,
        default_account_id,
        unattributed_reason
    from {{ ref('int_cloud_charges_matched') }}
),

previous as (
    {%- if is_incremental() %}
        select
            billing_line_id,
            charge_month,
            attribution_rule,
            allocation_name,
            reservation_id,
            resource_group_id,
            deployment_id,
            default_account_id,
            unattributed_reason,
            attributed_at
        from {{ this }}
    {%- else %}
        -- A full build starts from nothing: every line is attributed now.
        select
            *,
            cast(null as {{ dbt.type_timestamp() }}) as attributed_at
        from matched
        where 1 = 0
    {%- endif %}
),

months_to_write as (
    select matched.charge_month
    from matched
    left join previous on matched.billing_line_id = previous.billing_line_id
    where previous.billing_line_id is null
    union
    select previous.charge_month
    from previous
    left join matched on previous.billing_line_id = matched.billing_line_id
    where matched.billing_line_id is null
    {%- if reattribute_month is not none %}
    union
    select cast('{{ reattribute_month }}-01' as date) as charge_month
    {%- endif %}
),

kept as (
    select previous.*
    from previous
    inner join matched on previous.billing_line_id = matched.billing_line_id
    inner join months_to_write on previous.charge_month = months_to_write.charge_month
    {%- if reattribute_month is not none %}
    where
        not (
            previous.charge_month = cast('{{ reattribute_month }}-01' as date)
            and previous.attribution_rule in ('account_default', 'unattributed')
        )
    {%- endif %}
),

attributed_now as (
    select
        matched.*,
        cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as {{ dbt.type_timestamp() }})
            as attributed_at
    from matched
    inner join months_to_write on matched.charge_month = months_to_write.charge_month
    left join kept on matched.billing_line_id = kept.billing_line_id
    where kept.billing_line_id is null
),

final as (
    select * from kept
    union all
    select * from attributed_now
)

select * from final
