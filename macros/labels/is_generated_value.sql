{#- True when a label value looks generated and must never become an owner (SPEC §6): a hex
    string of 8+ characters, a UUID, a name ending in a pod-template hash, or six or more digits
    in a row; false otherwise (also for null). The pod-template hash is the SPEC's own pattern,
    `-[a-z0-9]{9,10}$` after a name, on the value as written: so a real name whose last word has
    9 or 10 lower-case letters (`data-analytics`, `llm-inference`) looks generated too and falls
    through to the next rule (the differential test found the narrower Kubernetes-alphabet
    pattern disagreeing with the reference ledger). -#}
{% macro is_generated_value(value) -%}
    {%- set lowered = 'lower(' ~ value ~ ')' -%}
    coalesce(
        {{ regexp_matches(lowered, "'^[0-9a-f]{8,}$'") }}
        or {{ regexp_matches(
            lowered, "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'"
        ) }}
        or {{ regexp_matches(value, "'^.+-[a-z0-9]{9,10}$'") }}
        or {{ regexp_matches(value, "'[0-9]{6,}'") }},
        false
    )
{%- endmacro %}
