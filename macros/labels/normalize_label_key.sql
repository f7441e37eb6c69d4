{#- The spelling rules of label-key normalization (SPEC §6), as an expression: lower case, the
    operator's `label_` prefix dropped, a DNS prefix ending in `/` dropped
    (`app.kubernetes.io/name` → `name`), `-`, `.` and spaces folded to `_`. The two steps that
    need configuration (sanitized DNS prefixes such as `app_kubernetes_io_`, and aliases) are
    applied on top by `label_key_mapping`, which the label models use. -#}
{% macro normalize_label_key(raw_key) -%}
    replace(
        replace(
            replace(
                regexp_extract(
                    {{ strip_operator_label_prefix('lower(trim(' ~ raw_key ~ '))') }},
                    '([^/]*)$',
                    1
                ),
                '-',
                '_'
            ),
            '.',
            '_'
        ),
        ' ',
        '_'
    )
{%- endmacro %}
