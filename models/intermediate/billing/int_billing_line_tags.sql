{#- One row per billing line and tag (AWS resource tags, Google labels, Azure and FOCUS tags),
    the key as the source writes it and normalized as kubeledger.config normalizes keys. -#}

with

billing_lines as (
    select
        billing_line_id,
        tags
    from {{ ref('int_billing_lines_unioned') }}
),

exploded as (
    {{ billing_explode_json_object('billing_lines', 'billing_line_id', 'tags') }}
),

final as (
    select
        billing_line_id,
        tag_key,
        {{ billing_normalize_tag_key('tag_key') }} as tag_key_normalized,
        tag_value
    from exploded
)

select * from final
