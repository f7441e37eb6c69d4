{#- The key of a `key:value` label pair: the text before the first colon (values may contain
    colons; keys cannot). A pair without a colon is a key with an empty value. -#}
{% macro label_pair_key(pair) -%}
    case
        when instr({{ pair }}, ':') > 0 then substr({{ pair }}, 1, instr({{ pair }}, ':') - 1)
        else {{ pair }}
    end
{%- endmacro %}
