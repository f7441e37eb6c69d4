-- An allocation's budget has one currency: a line in another currency attributed to it would
-- be added to the budget unconverted. A warning that names the lines; map such accounts to an
-- allocation in their own currency.
{{ config(severity='warn') }}

select
    charged.billing_line_id,
    charged.allocation_name,
    charged.currency as line_currency,
    allocations.currency as allocation_currency
from {{ ref('fct_cloud_charge_allocations') }} as charged
inner join {{ ref('stg_config_allocations__allocations') }} as allocations
    on charged.allocation_name = allocations.allocation_name
where
    charged.placement = 'allocation'
    and charged.currency != allocations.currency
