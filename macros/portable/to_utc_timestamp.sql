{#- Parses every timestamp spelling our sources write into a timestamp without time zone, in
    UTC: the koku operator's `2026-10-06 18:00:00 +0000 UTC`, ISO 8601 with or without `Z` and
    fractional seconds, a bare date, and Azure's `MM/DD/YYYY`. Unreadable text gives null
    (the loader has quarantined such rows already). -#}
{% macro to_utc_timestamp(column) -%}
    {{ return(adapter.dispatch('to_utc_timestamp', 'kubeledger')(column)) }}
{%- endmacro %}

{% macro default__to_utc_timestamp(column) -%}
    coalesce(
        try_strptime(replace({{ column }}, ' +0000 UTC', ''), '%Y-%m-%d %H:%M:%S'),
        try_strptime(
            regexp_replace(replace({{ column }}, 'Z', ''), '\.\d+$', ''), '%Y-%m-%dT%H:%M:%S'
        ),
        try_strptime(regexp_replace({{ column }}, '[+-]00:?00$', ''), '%Y-%m-%dT%H:%M:%S'),
        try_strptime({{ column }}, '%Y-%m-%d'),
        try_strptime({{ column }}, '%m/%d/%Y'),
        try_strptime(left({{ column }}, 19), '%Y-%m-%dT%H:%M:%S'),
        try_strptime(left({{ column }}, 19), '%Y-%m-%d %H:%M:%S')
    )
{%- endmacro %}

{% macro spark__to_utc_timestamp(column) -%}
    coalesce(
        to_timestamp(replace({{ column }}, ' +0000 UTC', ''), 'yyyy-MM-dd HH:mm:ss'),
        to_timestamp(
            regexp_replace(replace({{ column }}, 'Z', ''), '\\.[0-9]+$', ''),
            "yyyy-MM-dd'T'HH:mm:ss"
        ),
        to_timestamp(regexp_replace({{ column }}, '[+-]00:?00$', ''), "yyyy-MM-dd'T'HH:mm:ss"),
        to_timestamp({{ column }}, 'yyyy-MM-dd'),
        to_timestamp({{ column }}, 'MM/dd/yyyy'),
        to_timestamp(left({{ column }}, 19), "yyyy-MM-dd'T'HH:mm:ss"),
        to_timestamp(left({{ column }}, 19), 'yyyy-MM-dd HH:mm:ss')
    )
{%- endmacro %}
