{#- A money or quantity string as decimal(38, 10); empty or unreadable text gives null (the
    loader has quarantined unreadable rows already). Exponent notation (`1.2E-7`) is read. -#}
{% macro billing_to_amount(column) -%}
    {{ dbt.safe_cast(column, 'decimal(38, 10)') }}
{%- endmacro %}
