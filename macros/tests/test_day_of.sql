{#- Generic test: the column is the day (UTC, SPEC §1.7) of `timestamp` in every row. With it, a
    key that holds both the timestamp and the day is unique exactly when the key without the
    day is: two rows with the same timestamp have the same day. -#}
{% test day_of(model, column_name, timestamp) %}
    select
        {{ column_name }},
        {{ timestamp }}
    from {{ model }}
    where {{ column_name }} is null
        or {{ timestamp }} is null
        or {{ column_name }} <> cast({{ timestamp }} as date)
{% endtest %}
