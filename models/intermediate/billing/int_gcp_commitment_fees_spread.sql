{#- Google Cloud committed-use fees spread over the lines they discounted (SPEC §3.2): each
    billing account's commitment fee of a UTC day goes to that day's lines with committed use
    discount credits, in proportion to those credits, so a CUD-covered node costs its share of
    the commitment and not about zero. The fee rows give the same amount back (a negative
    share), so over an account-day the shares sum to exactly 0 and money is only moved. A day
    with fees but no CUD credits moves nothing: the fee stays on its rows (commitment waste).
    One row per line that receives or gives a share. -#}

with

gcp_lines as (
    select
        billing_line_id,
        billing_account_id,
        charge_date,
        effective_cost,
        cud_credit_amount,
        is_commitment_fee
    from {{ ref('stg_gcp__billing_lines') }}
),

fees_per_day as (
    select
        billing_account_id,
        charge_date,
        sum(effective_cost) as commitment_fee_cost
    from gcp_lines
    where is_commitment_fee
    group by billing_account_id, charge_date
),

covered_lines as (
    select
        billing_line_id,
        billing_account_id,
        charge_date,
        cud_credit_amount
    from gcp_lines
    where not is_commitment_fee and cud_credit_amount < 0
),

covered_per_day as (
    select
        billing_account_id,
        charge_date,
        sum(cud_credit_amount) as cud_credit_amount
    from covered_lines
    group by billing_account_id, charge_date
),

shares as (
    select
        covered_lines.billing_line_id,
        covered_lines.billing_account_id,
        covered_lines.charge_date,
        fees_per_day.commitment_fee_cost,
        -- in decimal, so a share never depends on a double's last bit (SPEC §1.3)
        {{ decimal_divide(
            'fees_per_day.commitment_fee_cost * covered_lines.cud_credit_amount',
            'covered_per_day.cud_credit_amount'
        ) }} as rounded_share,
        -- The rounding remainder goes to the line with the largest credit (ties: smallest ID).
        row_number() over (
            partition by covered_lines.billing_account_id, covered_lines.charge_date
            order by covered_lines.cud_credit_amount asc, covered_lines.billing_line_id asc
        ) as share_rank
    from covered_lines
    inner join covered_per_day
        on
            covered_lines.billing_account_id = covered_per_day.billing_account_id
            and covered_lines.charge_date = covered_per_day.charge_date
    inner join fees_per_day
        on
            covered_lines.billing_account_id = fees_per_day.billing_account_id
            and covered_lines.charge_date = fees_per_day.charge_date
),

exact_shares as (
    select
        billing_line_id,
        billing_account_id,
        charge_date,
        cast(
            rounded_share
            + case
                when share_rank = 1
                    then
                        commitment_fee_cost
                        - sum(rounded_share) over (partition by billing_account_id, charge_date)
                else 0
            end
            as decimal(38, 10)
        ) as amortized_commitment_cost
    from shares
),

fee_offsets as (
    select
        gcp_lines.billing_line_id,
        gcp_lines.billing_account_id,
        gcp_lines.charge_date,
        cast(-gcp_lines.effective_cost as decimal(38, 10)) as amortized_commitment_cost
    from gcp_lines
    inner join covered_per_day
        on
            gcp_lines.billing_account_id = covered_per_day.billing_account_id
            and gcp_lines.charge_date = covered_per_day.charge_date
    where gcp_lines.is_commitment_fee
),

final as (
    select
        billing_line_id,
        billing_account_id,
        charge_date,
        amortized_commitment_cost,
        false as is_commitment_fee
    from exact_shares
    union all
    select
        billing_line_id,
        billing_account_id,
        charge_date,
        amortized_commitment_cost,
        true as is_commitment_fee
    from fee_offsets
)

select * from final
