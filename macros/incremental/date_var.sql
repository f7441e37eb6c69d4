{#- The text of a date var (`YYYY-MM-DD`), or `default` when the var is unset; any other
    value stops the run before it reaches SQL, so a var is never pasted in as code. -#}
{% macro date_var(name, default=none) -%}
    {%- set value = var(name, none) -%}
    {%- if value is none or (value | string | trim) == '' -%}
        {{- return(default) -}}
    {%- endif -%}
    {%- set text = value | string | trim -%}
    {%- if not modules.re.match('^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$', text) -%}
        {{ exceptions.raise_compiler_error(
            "var " ~ name ~ " must be a date YYYY-MM-DD, got '" ~ text ~ "'"
        ) }}
    {%- endif -%}
    {{- return(text) -}}
{%- endmacro %}
