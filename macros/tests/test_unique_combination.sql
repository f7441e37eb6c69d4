{#- Generic test: no two rows share the same values of these columns (a model's grain). -#}
{% test unique_combination(model, columns) %}
    {{ adapter.dispatch('unique_combination_rows', 'kubeledger')(model, columns) }}
{% endtest %}

{#- Each combination that more than one row holds, with its count. -#}
{% macro default__unique_combination_rows(model, columns) -%}
    select
        {{ columns | join(', ') }},
        count(*) as row_count
    from {{ model }}
    group by {{ columns | join(', ') }}
    having count(*) > 1
{%- endmacro %}

{#- The same rows on DuckDB, found in two steps: the 64-bit hashes of the combinations that more
    than one row holds (grouping by one integer instead of five or six text and time columns:
    half the time on a month's pod-hours), then the rows with those hashes grouped by the
    combination itself, so that two different combinations with one hash are not a duplicate. -#}
{% macro duckdb__unique_combination_rows(model, columns) -%}
    {%- set combination = columns | join(', ') %}
    with repeated_hashes as (
        select hash({{ combination }}) as combination_hash
        from {{ model }}
        group by hash({{ combination }})
        having count(*) > 1
    )

    select
        {{ combination }},
        count(*) as row_count
    from {{ model }}
    where hash({{ combination }}) in (select combination_hash from repeated_hashes)
    group by {{ combination }}
    having count(*) > 1
{%- endmacro %}
