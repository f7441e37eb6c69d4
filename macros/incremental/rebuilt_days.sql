{#- Data tests of a day's run check the days it rebuilt, not the whole month (SPEC §15).

    A model configured by incremental_by_day replaces the days of day_range_filter and leaves
    every other row as it was, checked by the run that wrote it. On DuckDB its pre-hook
    (record_rebuilt_days, rendered just before the model is built) records, when the model is
    built incrementally for a range of days, the model and the filter of the rows it rebuilds
    in `ops.dbt_rebuilt_days`, under this invocation's id. A model built whole (its first
    build, --full-refresh, a run without --start) records nothing.

    get_where_subquery (dbt's hook for a generic test's model) then limits a test of that model
    to the rebuilt rows when the test can only fail on a rebuilt row:
    - a test of each row on its own (not_null, column_rules, accepted_values, day_of);
    - unique_combination whose columns include the day column, so that two rows with the same
      key are on the same day: both rebuilt or neither.
    Any other test, a test of a model built whole, or a run on another engine checks the whole
    table, as before. -#}
{#- on-run-start: the record of this invocation's rebuilt days, `ops.dbt_rebuilt_days`, one row
    per model and invocation (the rows of earlier invocations are deleted: one writer at a time).
    A table of the warehouse, not of a connection: dbt-duckdb closes the database between nodes
    when no other node holds it. -#}
{% macro start_rebuilt_days_record() -%}
    {{ return(adapter.dispatch('start_rebuilt_days_record', 'kubeledger')()) }}
{%- endmacro %}

{% macro default__start_rebuilt_days_record() -%}
{%- endmacro %}

{% macro duckdb__start_rebuilt_days_record() -%}
    {%- if date_var('start_date') -%}
        create schema if not exists ops;
        create table if not exists ops.dbt_rebuilt_days (
            invocation_id varchar not null,
            relation varchar not null,
            date_column varchar not null,
            rows_filter varchar not null
        );
        delete from ops.dbt_rebuilt_days where invocation_id <> '{{ invocation_id }}'
    {%- endif -%}
{%- endmacro %}

{#- Pre-hook of a model configured by incremental_by_day on DuckDB (rendered just before the
    model is built, so is_incremental() says how this run builds it). -#}
{% macro record_rebuilt_days(date_column) -%}
    {%- if is_incremental() and date_var('start_date') -%}
        insert into ops.dbt_rebuilt_days values (
            '{{ invocation_id }}', '{{ this | string | replace("'", "''") }}', '{{ date_column }}',
            '{{ day_range_filter(date_column) | replace("'", "''") }}'
        )
    {%- endif -%}
{%- endmacro %}

{#- Generic tests that fail on a row only through that row's own values. -#}
{% macro _row_level_tests() -%}
    {{ return(['not_null', 'column_rules', 'accepted_values', 'day_of']) }}
{%- endmacro %}

{% macro duckdb__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set rebuilt = rebuilt_rows_filter(relation) -%}
    {%- set filters = [where, rebuilt] | select | list -%}
    {%- if filters -%}
        {%- set filtered -%}
            (select * from {{ relation }} where ({{ filters | join(') and (') }})) dbt_subquery
        {%- endset -%}
        {{ return(filtered) }}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{#- The filter of the rows this invocation rebuilt in `relation`, when the current generic test
    can only fail on those rows; none otherwise. -#}
{% macro rebuilt_rows_filter(relation) -%}
    {%- if not execute or not date_var('start_date') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set test = model.get('test_metadata') or {} -%}
    {%- set kwargs = test.get('kwargs') or {} -%}
    {%- if test.get('name') not in _row_level_tests() and test.get('name') != 'unique_combination' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set record = adapter.get_relation(
        database=target.database, schema='ops', identifier='dbt_rebuilt_days'
    ) -%}
    {%- if record is none -%}
        {#- a command without on-run-start (compile, show): nothing was rebuilt -#}
        {{ return(none) }}
    {%- endif -%}
    {%- set found = run_query(
        "select date_column, rows_filter from " ~ record ~ " where invocation_id = '"
        ~ invocation_id ~ "' and relation = '" ~ (relation | string | replace("'", "''")) ~ "'"
    ) -%}
    {%- if found.rows | length != 1 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set date_column, rows_filter = found.rows[0][0], found.rows[0][1] -%}
    {%- if test.get('name') == 'unique_combination'
        and date_column not in (kwargs.get('columns') or []) -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(rows_filter) }}
{%- endmacro %}
