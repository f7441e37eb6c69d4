{#- The date the close is evaluated as of, as a SQL date: var `as_of` (`YYYY-MM-DD`, set by
    `kubeledger close --as-of`), else the day the dbt run started (UTC). Grace window and
    deadline are measured from the month's end to this date. -#}
{% macro close_as_of_date() -%}
    {%- set as_of = var('as_of', none) -%}
    {%- if as_of -%}
        {%- set text = as_of | string | trim -%}
        {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', text) -%}
            {{ exceptions.raise_compiler_error(
                "var as_of must be a date YYYY-MM-DD, got '" ~ text ~ "'"
            ) }}
        {%- endif -%}
    {%- else -%}
        {%- set text = run_started_at.strftime('%Y-%m-%d') -%}
    {%- endif -%}
    cast('{{ text }}' as date)
{%- endmacro %}
