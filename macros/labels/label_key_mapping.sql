{#- A query mapping every distinct raw key of `raw_labels` (a CTE or relation with a
    `raw_label_key` column) to its normalized key (SPEC §6): `normalize_label_key`, then the
    longest sanitized DNS prefix of `dns_prefixes` (column `sanitized_prefix`, e.g.
    `app_kubernetes_io_`) dropped, then the aliases of `aliases` (`alias_key` →
    `canonical_key`) applied. `is_key_rewritten` is false when the key came through unchanged
    apart from the operator's `label_` prefix: such a key wins a collision. Working on the few
    distinct keys keeps the prefix and alias joins off the label rows themselves. -#}
{% macro label_key_mapping(raw_labels, dns_prefixes, aliases) -%}
    select
        keys_stripped.raw_label_key,
        coalesce(alias_matches.canonical_key, keys_stripped.stripped_key) as label_key,
        coalesce(alias_matches.canonical_key, keys_stripped.stripped_key)
        <> {{ strip_operator_label_prefix('keys_stripped.raw_label_key') }} as is_key_rewritten
    from (
        select
            keys_folded.raw_label_key,
            substr(
                keys_folded.folded_key,
                max(coalesce(length(prefix_matches.sanitized_prefix), 0)) + 1
            ) as stripped_key
        from (
            select distinct
                raw_label_key,
                {{ normalize_label_key('raw_label_key') }} as folded_key
            from {{ raw_labels }}
        ) as keys_folded
        left join {{ dns_prefixes }} as prefix_matches
            on
                substr(keys_folded.folded_key, 1, length(prefix_matches.sanitized_prefix))
                = prefix_matches.sanitized_prefix
                and length(keys_folded.folded_key) > length(prefix_matches.sanitized_prefix)
        group by keys_folded.raw_label_key, keys_folded.folded_key
    ) as keys_stripped
    left join {{ aliases }} as alias_matches
        on keys_stripped.stripped_key = alias_matches.alias_key
{%- endmacro %}
