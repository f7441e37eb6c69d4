{#- The CTEs shared by the pod, node and namespace label models (SPEC §6): from a CTE
    `label_pairs` (the entity's key columns and one raw `label_pair` per row, already cut to
    the day's last hour) to `final`: keys split and normalized (DNS prefixes, aliases), the
    winner kept when two raw keys normalize alike (no rewrite first, then the first raw key),
    generated-looking values flagged. Expects CTEs `label_dns_prefixes` and `label_aliases`. -#}
{% macro normalized_label_ctes(key_columns) -%}
raw_labels as (
    select
        {%- for column in key_columns %}
        {{ column }},
        {%- endfor %}
        {{ label_pair_key('label_pair') }} as raw_label_key,
        {{ label_pair_value('label_pair') }} as label_value
    from label_pairs
    where label_pair <> ''
),

label_keys as (
    {{ label_key_mapping('raw_labels', 'label_dns_prefixes', 'label_aliases') }}
),

-- The winner of each entity's label key: the least (is the key rewritten, raw key, value);
-- one grouped min over that triple, not a window sorting every label row.
labels_ranked as (
    select
        {%- for column in key_columns %}
        raw_labels.{{ column }},
        {%- endfor %}
        label_keys.label_key,
        min({{ ordered_struct([
            ('is_key_rewritten', 'label_keys.is_key_rewritten'),
            ('raw_label_key', 'raw_labels.raw_label_key'),
            ('label_value', 'raw_labels.label_value'),
        ]) }}) as winner
    from raw_labels
    inner join label_keys
        on raw_labels.raw_label_key = label_keys.raw_label_key
    where label_keys.label_key <> ''
    group by
        {%- for column in key_columns %}
        raw_labels.{{ column }},
        {%- endfor %}
        label_keys.label_key
),

final as (
    select
        {%- for column in key_columns %}
        {{ column }},
        {%- endfor %}
        label_key,
        winner.label_value as label_value,
        winner.raw_label_key as raw_label_key,
        {{ is_generated_value('winner.label_value') }} as is_generated_value
    from labels_ranked
)
{%- endmacro %}
