{#- Parses every timestamp spelling our sources write into a timestamp without time zone, in
    UTC (SPEC §1.7): the koku operator's `2026-10-06 18:00:00 +0000 UTC` (Go's `-0700 MST`
    layout, so also `2026-10-06 20:00:00 +0200 CEST`), ISO 8601 with `T` or a space and `Z`,
    `UTC`, a numeric offset (`+02:00`, `+0200`, `+02`) or an IANA zone name
    (`America/New_York`), a bare date, and Azure's `MM/DD/YYYY` forms; no zone means UTC.
    A timestamp with an offset is converted to UTC, never read as wall time: `2026-10-06
    20:00:00 +0200 CEST` is 18:00 UTC. Fractional seconds are dropped. Text in no known form,
    or with a zone the engine does not know (an abbreviation such as `CEST` without its
    offset), gives null, never a shifted time (the loader quarantines such rows). The usual
    UTC spellings come first, so most rows skip the zone parse; the expression stays short
    (Spark's metastore keeps a view's text in 32,700 characters). -#}
{% macro to_utc_timestamp(column) -%}
    {{ return(adapter.dispatch('to_utc_timestamp', 'kubeledger')(column)) }}
{%- endmacro %}

{#- The zone parse (a text that ends in a zone) goes through `timestamptz`, whose instant does
    not depend on the session time zone; naive text never does. Go's layout loses its
    abbreviation first (the offset decides). -#}
{% macro default__to_utc_timestamp(column) -%}
    {%- set text = 'trim(' ~ column ~ ')' -%}
    {%- set ends_in_zone =
        "'([0-9](Z|z)|[0-9] ?[+-][0-9]{2}(:?[0-9]{2})?| UTC| GMT| [A-Za-z_]+/[A-Za-z_/+-]+)$'" -%}
    {%- set go_layout = "'^(.* [+-][0-9]{4}) [A-Za-z+-][A-Za-z0-9+-]*$'" -%}
    coalesce(
        try_strptime({{ text }}, ['%Y-%m-%d %H:%M:%S +0000 UTC', '%Y-%m-%dT%H:%M:%SZ']),
        try_strptime({{ text }}, ['%Y-%m-%d %H:%M:%S', '%Y-%m-%dT%H:%M:%S', '%Y-%m-%d']),
        date_trunc(
            'second', try_strptime({{ text }}, ['%Y-%m-%d %H:%M:%S.%f', '%Y-%m-%dT%H:%M:%S.%f'])
        ),
        date_trunc('second', timezone('UTC', coalesce(
            case
                when regexp_matches({{ text }}, {{ ends_in_zone }})
                    then try_cast({{ text }} as timestamptz)
            end,
            try_strptime(
                regexp_extract({{ text }}, {{ go_layout }}, 1),
                ['%Y-%m-%d %H:%M:%S %z', '%Y-%m-%d %H:%M:%S.%n %z']
            )
        ))),
        try_strptime({{ text }}, ['%m/%d/%Y', '%m/%d/%Y %H:%M:%S', '%m/%d/%Y %I:%M:%S %p'])
    )
{%- endmacro %}

{#- Spark (session time zone UTC): the text is rewritten to ISO with the offset attached
    (`2026-10-06T20:00:00+0200`; Go's abbreviation, a space before the zone and fractional
    seconds dropped, ` UTC` → `Z`), which Spark's cast reads as an instant. -#}
{% macro spark__to_utc_timestamp(column) -%}
    {%- set text = 'trim(' ~ column ~ ')' -%}
    {%- set date_time =
        "'^([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}:[0-9]{2})(\\\\.[0-9]+)? *'" -%}
    {%- set zone_suffix =
        "'(?:([+-][0-9]{2}(?::?[0-9]{2})?) [A-Za-z+-][A-Za-z0-9+-]*| ?(?:UTC|GMT))$'" -%}
    {%- set iso_form =
        "'^[0-9-]{10}T[0-9:]{8}([zZ]|[+-][0-9]{2}(:?[0-9]{2})?|[A-Za-z_]+/[A-Za-z_/+-]+)?$'" -%}
    {%- set iso -%}
        regexp_replace(
            regexp_replace({{ text }}, {{ date_time }}, '$1T$2'), {{ zone_suffix }}, '$1'
        )
    {%- endset -%}
    coalesce(
        case
            when {{ iso }} rlike {{ iso_form }}
                then cast({{ iso }} as timestamp)
        end,
        to_timestamp({{ text }}, 'yyyy-MM-dd'),
        to_timestamp({{ text }}, 'MM/dd/yyyy'),
        to_timestamp({{ text }}, 'MM/dd/yyyy HH:mm:ss'),
        to_timestamp({{ text }}, 'MM/dd/yyyy hh:mm:ss a')
    )
{%- endmacro %}
