{#- True when a label value looks generated and must never become an owner (SPEC §6): a hex
    string of 8+ characters, a UUID, a name ending in a pod-template hash, or six or more digits
    in a row; false otherwise (also for null). The pod-template hash is matched in the alphabet
    Kubernetes draws it from (no vowels, no 0, 1, 3), so that `checkout-7d9f8b6c5d` is generated
    but real names with a 9- or 10-letter last word (`data-analytics`, `cost-management`) are
    not. -#}
{% macro is_generated_value(value) -%}
    {%- set lowered = 'lower(' ~ value ~ ')' -%}
    coalesce(
        {{ regexp_matches(lowered, "'^[0-9a-f]{8,}$'") }}
        or {{ regexp_matches(
            lowered, "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'"
        ) }}
        or {{ regexp_matches(lowered, "'[a-z0-9]-[bcdfghjklmnpqrstvwxz2456789]{9,10}$'") }}
        or {{ regexp_matches(value, "'[0-9]{6,}'") }},
        false
    )
{%- endmacro %}
