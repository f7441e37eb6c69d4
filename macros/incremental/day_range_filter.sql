{#- Restricts an incremental model to the days of this run: the range of vars `start_date` and
    `end_date` (set by a Dagster partition or `kubeledger build --start/--end`, each checked to
    be a date by date_var), plus the days of var `reallocate_days` (a list of `YYYY-MM-DD`: days
    whose billing lines changed since they were allocated, which the orchestration allocates
    again in the same run, SPEC §9). On a full build, or an incremental run without a range,
    every day is (re)computed.

    `source_day`: a column of the same rows within a day of `date_column` and cheaper to read
    (a usage report's `source_day`, typed at load, against the `usage_date` staging parses from
    text). A day's run then first keeps the rows whose `source_day` is one of its days or a day
    either side, so DuckDB skips the other days' row groups by their min/max before it parses
    anything; the exact filter on `date_column` still decides. -#}
{% macro day_range_filter(date_column, source_day=none) -%}
    {%- set start_date = date_var('start_date') -%}
    {%- if is_incremental() and start_date -%}
        {%- set end_date = date_var('end_date', start_date) -%}
        {%- set extra_days = var('reallocate_days', none) or [] -%}
        {%- for day in extra_days -%}
            {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', day | string) -%}
                {{ exceptions.raise_compiler_error(
                    "var reallocate_days must list dates YYYY-MM-DD, got '" ~ day ~ "'"
                ) }}
            {%- endif -%}
        {%- endfor -%}
        {%- if source_day %}
        {%- set one_day = modules.datetime.timedelta(days=1) -%}
        {%- set ranges = [(start_date, end_date)] -%}
        {%- for extra in extra_days %}{% do ranges.append((extra, extra)) %}{% endfor -%}
        (({% for first, last in ranges -%}
            {%- set before = modules.datetime.date.fromisoformat(first | string) - one_day -%}
            {%- set after = modules.datetime.date.fromisoformat(last | string) + one_day -%}
            {{ source_day }} between cast('{{ before }}' as date) and cast('{{ after }}' as date)
            {%- if not loop.last %} or {% endif %}
        {%- endfor %}) and
        {% endif -%}
        ({{ date_column }} between cast('{{ start_date }}' as date)
            and cast('{{ end_date }}' as date)
        {%- if extra_days %}
            or {{ date_column }} in (
                {%- for day in extra_days %}cast('{{ day }}' as date)
                    {%- if not loop.last %}, {% endif %}{% endfor -%}
            )
        {%- endif -%})
        {%- if source_day %}){% endif -%}
    {%- else -%}
        1 = 1
    {%- endif -%}
{%- endmacro %}
