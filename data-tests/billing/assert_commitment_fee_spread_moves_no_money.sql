-- The Google commitment fee spread only moves money: over every billing account and UTC day,
-- amortized_commitment_cost sums to exactly 0 (shares on the covered lines, the same amount
-- taken back from the fee rows), so effective_cost + amortized_commitment_cost still sums to
-- the bill. Returns the account-days where it does not.
with

billing_lines as (
    select
        provider,
        billing_account_id,
        charge_date,
        amortized_commitment_cost
    from {{ ref('fct_billing_lines') }}
),

final as (
    select
        provider,
        billing_account_id,
        charge_date,
        sum(amortized_commitment_cost) as amortized_commitment_cost
    from billing_lines
    group by provider, billing_account_id, charge_date
    having sum(amortized_commitment_cost) != 0
)

select * from final
