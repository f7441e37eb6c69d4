{{ config(tags=['close']) }}

-- A slice billed on its estimate (no link, negative invoice, fallback) has factor 1.0 and is
-- not reconciled; a reconciled slice is billed on its invoice.
select
    bill_slice_id,
    basis,
    factor,
    is_reconciled
from {{ ref('int_bill_targets_monthly') }}
where
    (basis = 'estimate' and (factor <> 1 or is_reconciled))
    or (is_reconciled and basis <> 'invoice')
