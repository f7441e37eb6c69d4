{#- Generic test: the column is never below zero (floating-point noise of 1e-9 allowed). -#}
{% test non_negative(model, column_name) %}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} < -0.000000001
{% endtest %}
