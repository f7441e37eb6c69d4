{#- The fraction of a GPU a GPU-report row holds (SPEC §5): a MIG slice its profile's compute
    slices (`3g.20gb` → 3) over the GPU's slices (`gpu_max_slices` when the operator writes it,
    else by model as NVIDIA lists them: A30 4, RTX PRO 6000 4, RTX PRO 5000 2, A100 / H100 /
    H200 / B200 7); a whole or time-shared GPU (no MIG profile) 1. -#}
{% macro mig_slice_fraction(profile, max_slices, model_name) -%}
    case
        when nullif({{ regexp_extract_group(profile, "'^([0-9]+)g'") }}, '') is null then 1.0
        else
            cast(nullif({{ regexp_extract_group(profile, "'^([0-9]+)g'") }}, '') as double)
            / case
                when {{ max_slices }} > 0 then {{ max_slices }}
                when upper({{ model_name }}) like '%A30%' then 4
                when upper({{ model_name }}) like '%RTX PRO 6000%' then 4
                when upper({{ model_name }}) like '%RTX PRO 5000%' then 2
                else 7
            end
    end
{%- endmacro %}
