{#- The value of a `key:value` label pair: everything after the first colon, colons included
    (`label_url:http://x` → `http://x`); empty when the pair has no colon. -#}
{% macro label_pair_value(pair) -%}
    case
        when instr({{ pair }}, ':') > 0 then substr({{ pair }}, instr({{ pair }}, ':') + 1)
        else ''
    end
{%- endmacro %}
