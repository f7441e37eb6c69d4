{#- Parses every timestamp spelling our sources write into a timestamp without time zone, in
    UTC (SPEC §1.7): the koku operator's `2026-10-06 18:00:00 +0000 UTC` (Go's
    `-0700 MST` layout, so also `2026-10-06 20:00:00 +0200 CEST`), ISO 8601 with `T` or a space,
    with `Z`, `UTC`, a numeric offset (`+02:00`, `+0200`, `+02`) or an IANA zone name
    (`America/New_York`), a bare date, and Azure's `MM/DD/YYYY` forms; no zone means UTC.
    A timestamp with an offset is converted to UTC, never read as wall time: `2026-10-06
    20:00:00 +0200 CEST` is 18:00 UTC. Fractional seconds are dropped. Text in no known form,
    or with a zone the engine does not know (a bare abbreviation such as `CEST` without its
    offset), gives null, never a shifted time (the loader quarantines such rows). The usual
    UTC spellings are tried first, so most rows skip the general parse. -#}
{% macro to_utc_timestamp(column) -%}
    {{ return(adapter.dispatch('to_utc_timestamp', 'kubeledger')(column)) }}
{%- endmacro %}

{#- The regex of the general form: 1 date, 2 hours and minutes, 3 seconds, 4 `Z`/`UTC`/`GMT`
    or a numeric offset, 5 a zone name (after a numeric offset: only its abbreviation). -#}
{% macro to_utc_timestamp_pattern() -%}
    '^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ]([0-9]{2}:[0-9]{2})(:[0-9]{2})?(?:[.,][0-9]+)?)? *(Z|z|UTC|GMT|[+-][0-9]{2}(?::?[0-9]{2})?)?(?: +([A-Za-z][A-Za-z0-9_/+-]*|[+-][0-9]{2,4}))?$'
{%- endmacro %}

{#- The parts the general form is assembled from, for both engines: the text, the wall time as
    `YYYY-MM-DD HH:MM:SS`, the zone text, the zone name, and the offset east of UTC in minutes
    (null when the zone is a name). -#}
{% macro to_utc_timestamp_parts(column) -%}
    {%- set text = 'trim(' ~ column ~ ')' -%}
    {%- set pattern = to_utc_timestamp_pattern() -%}
    {%- set part = "regexp_extract(" ~ text ~ ", " ~ pattern ~ ", GROUP)" -%}
    {%- set wall -%}
        case when {{ part.replace('GROUP', '1') }} != '' then
            {{ part.replace('GROUP', '1') }} || ' '
            || coalesce(nullif({{ part.replace('GROUP', '2') }}, ''), '00:00')
            || coalesce(nullif({{ part.replace('GROUP', '3') }}, ''), ':00')
        end
    {%- endset -%}
    {%- set zone = part.replace('GROUP', '4') -%}
    {%- set zone_name = part.replace('GROUP', '5') -%}
    {%- set offset_minutes -%}
        case
            when {{ zone }} in ('Z', 'z', 'UTC', 'GMT') then 0
            when {{ zone }} = '' and {{ zone_name }} in ('', 'UTC', 'GMT', 'Z') then 0
            when {{ zone }} like '+%' or {{ zone }} like '-%' then
                (case when {{ zone }} like '-%' then -1 else 1 end)
                * (
                    cast(substr({{ zone }}, 2, 2) as integer) * 60
                    + coalesce(
                        cast(nullif(substr(replace({{ zone }}, ':', ''), 4, 2), '') as integer), 0
                    )
                )
        end
    {%- endset -%}
    {{ return({'text': text, 'wall': wall, 'zone': zone, 'zone_name': zone_name,
               'offset_minutes': offset_minutes}) }}
{%- endmacro %}

{% macro default__to_utc_timestamp(column) -%}
    {%- set parts = to_utc_timestamp_parts(column) -%}
    {%- set wall = 'try_strptime(' ~ parts.wall ~ ", '%Y-%m-%d %H:%M:%S')" -%}
    coalesce(
        try_strptime({{ parts.text }}, '%Y-%m-%d %H:%M:%S +0000 UTC'),
        try_strptime({{ parts.text }}, '%Y-%m-%dT%H:%M:%SZ'),
        try_strptime({{ parts.text }}, '%Y-%m-%d %H:%M:%S'),
        date_trunc('second', try_strptime({{ parts.text }}, '%Y-%m-%d %H:%M:%S.%f')),
        try_strptime({{ parts.text }}, '%Y-%m-%d'),
        case
            when {{ parts.offset_minutes }} is not null
                then {{ dbt.dateadd('minute', '-(' ~ parts.offset_minutes ~ ')', wall) }}
            when {{ parts.zone }} = '' and {{ parts.zone_name }} like '%/%'
                then timezone(
                    'UTC',
                    try_cast({{ parts.wall }} || ' ' || {{ parts.zone_name }} as timestamptz)
                )
        end,
        try_strptime({{ parts.text }}, ['%m/%d/%Y', '%m/%d/%Y %H:%M:%S', '%m/%d/%Y %I:%M:%S %p'])
    )
{%- endmacro %}

{% macro spark__to_utc_timestamp(column) -%}
    {%- set parts = to_utc_timestamp_parts(column) -%}
    {%- set wall = 'to_timestamp(' ~ parts.wall ~ ", 'yyyy-MM-dd HH:mm:ss')" -%}
    coalesce(
        case
            when {{ parts.offset_minutes }} is not null
                then timestamp_seconds(
                    unix_timestamp({{ wall }}) - 60 * ({{ parts.offset_minutes }})
                )
            when {{ parts.zone }} = '' and {{ parts.zone_name }} rlike '^[A-Za-z_]+/[A-Za-z_/+-]+$'
                then to_utc_timestamp({{ wall }}, {{ parts.zone_name }})
        end,
        to_timestamp({{ parts.text }}, 'MM/dd/yyyy'),
        to_timestamp({{ parts.text }}, 'MM/dd/yyyy HH:mm:ss'),
        to_timestamp({{ parts.text }}, 'MM/dd/yyyy hh:mm:ss a')
    )
{%- endmacro %}
