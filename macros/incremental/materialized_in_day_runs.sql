{#- A hint for a CTE that a day's run reads twice: `materialized` on DuckDB when the model is
    built for a range of days, nothing otherwise. DuckDB otherwise inlines the CTE into both
    readers (int_pod_hours_allocated's claims and their per-node-hour sums), and each parses
    the month's raw pod rows before its day filter: 1,000 nodes, one day, 7 s inlined against
    4 s materialized. Over a whole month the same hint is far slower (33 s against 11 s, the
    month's rows held in memory), so full builds inline. The rows are the same either way. -#}
{% macro materialized_in_day_runs() -%}
    {{ return(adapter.dispatch('materialized_in_day_runs', 'kubeledger')()) }}
{%- endmacro %}

{% macro default__materialized_in_day_runs() -%}
{%- endmacro %}

{% macro duckdb__materialized_in_day_runs() -%}
    {%- if is_incremental() and date_var('start_date') -%}
        materialized
    {%- endif -%}
{%- endmacro %}
