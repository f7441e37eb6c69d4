{{ config(tags=['close']) }}

-- SPEC §1.2: every bill slice's currency has a minor unit in the currency_minor_units seed
-- (from Babel), so its amounts can be rounded to that unit. A currency the seed does not list
-- (a typo, or a unit of account with 4 digits) fails the close, naming cluster and currency.
select
    bill_slice_id,
    cluster_id,
    currency
from {{ ref('int_bill_targets_monthly') }}
where minor_unit_digits is null
