{#- The exact cent allocation of SPEC §9 (a "cent" is one minor unit of the bill's currency:
    1 yen, 0.01 dollar, 0.001 dinar, SPEC §1.2): splits each partition's target (an invoice slice or
    an estimate, decimal(38, 3), >= 0) over the partition's lines in proportion to their
    estimates so that the billed lines sum to the target exactly and no line is negative.

    Arguments
      lines              a relation or CTE name: one row per line, with the columns below
      partition_by       the columns of one bill (e.g. month, cluster, family), a list
      line_id            the line's ID; ties for a carried cent go to the smallest, byte-wise
      estimate           the line's estimate, decimal(38, 6)
      target             the partition's target, decimal(38, 3), the same on all its rows
      is_unassigned      boolean column: the partition's `__unassigned__` line
      unassigned_policy  SQL text giving 'separate' or 'proportional' (a column or a quoted
                         literal), the same on all rows of a partition
      minor_unit_digits  SQL giving the digits of the currency's minor unit, 0 to 3 (a column
                         or a literal; default 2), the same on all rows of a partition

    Contract: every partition with a target above 0 has exactly one unassigned line (its
    estimate may be 0); it is where an invoice goes when nothing is attributed.

    Steps
      1. A negative estimate is clipped to 0 (a credit booked to one owner must not make
         another's bill larger, nor its own bill negative); the estimate column is kept.
      2. Policy `proportional`: the unassigned estimate is spread over the other lines by their
         estimates before rounding, i.e. the unassigned line weighs 0 and the others are
         scaled by total / (total - unassigned). With no other line above 0 it stays.
      3. exact_share = weight x target / total weight, in decimal (decimal_divide, 10
         decimals, rounded down); total weight 0 with a target: all of it to `__unassigned__`;
         target 0: every line 0.
      4. Every share is rounded DOWN to the minor unit; the k leftover cents (0 <= k < number of
         lines with a weight above 0, since each line lost less than a cent) go one each to
         the k lines with the largest weights, ties to the smallest line ID byte-wise.

    Adds the columns clipped_estimate, minor_unit (decimal(38, 3): one unit, e.g. 0.01), allocation_estimate (decimal(38, 6): the estimate after
    the policy), exact_share (decimal(38, 10)), rounded_down_cost, billed_cost
    (decimal(38, 3)), carry_rank (int), is_carry_cent (bool); the input may not use these
    names. Returns a select statement built from subqueries, usable as a CTE body. -#}
{% macro allocate_cents(
    lines,
    partition_by,
    line_id='line_id',
    estimate='estimated_cost',
    target='target_cost',
    is_unassigned='is_unassigned',
    unassigned_policy="'separate'",
    minor_unit_digits='2'
) -%}
    {%- if partition_by is string -%}
        {%- set partition_by = [partition_by] -%}
    {%- endif -%}
    {%- set partition_clause = 'partition by ' ~ (partition_by | join(', ')) -%}
    {%- set weighted_target -%}
        allocation_weight * cast({{ target }} as decimal(38, 3))
    {%- endset -%}
select
    carried.*,
    carried.carry_rank <= carried.leftover_cent_count as is_carry_cent,
    cast(
        carried.rounded_down_cost
        + case
            when carried.carry_rank <= carried.leftover_cent_count
                then carried.minor_unit
            else cast(0 as decimal(38, 3))
        end
        as decimal(38, 3)
    ) as billed_cost
from (
    select
        rounded.*,
        cast(
            {{ decimal_divide(
                'cast(rounded.' ~ target ~ ' as decimal(38, 3))'
                ~ ' - sum(rounded.rounded_down_cost) over (' ~ partition_clause ~ ')',
                'rounded.minor_unit',
                0
            ) }} as bigint
        ) as leftover_cent_count,
        row_number() over (
            {{ partition_clause }}
            order by rounded.allocation_weight desc, {{ bytewise_sort_key(line_id) }} asc
        ) as carry_rank
    from (
        select
            shared.*,
            cast(
                {{ decimal_divide('shared.exact_share', 'shared.minor_unit', 0) }}
                * shared.minor_unit
                as decimal(38, 3)
            ) as rounded_down_cost
        from (
            select
                weighted.*,
                case
                    when weighted.weight_total = 0 and weighted.{{ is_unassigned }}
                        then cast(weighted.clipped_total as decimal(38, 6))
                    when weighted.weight_total = 0 then cast(0 as decimal(38, 6))
                    when weighted.weight_total = weighted.clipped_total
                        then weighted.allocation_weight
                    else {{ decimal_divide(
                        'weighted.allocation_weight * weighted.clipped_total',
                        'weighted.weight_total',
                        6
                    ) }}
                end as allocation_estimate,
                case
                    when cast(weighted.{{ target }} as decimal(38, 3)) = 0
                        then cast(0 as decimal(38, 10))
                    when weighted.weight_total = 0 and weighted.{{ is_unassigned }}
                        then cast(weighted.{{ target }} as decimal(38, 10))
                    when weighted.weight_total = 0 then cast(0 as decimal(38, 10))
                    else {{ decimal_divide(
                        'weighted.' ~ weighted_target,
                        'weighted.weight_total',
                        10
                    ) }}
                end as exact_share
            from (
                select
                    totals.*,
                    case
                        when
                            totals.policy_is_proportional
                            and totals.assigned_total > 0
                            and totals.{{ is_unassigned }}
                            then cast(0 as decimal(38, 6))
                        else totals.clipped_estimate
                    end as allocation_weight,
                    case
                        when totals.policy_is_proportional and totals.assigned_total > 0
                            then totals.assigned_total
                        else totals.clipped_total
                    end as weight_total
                from (
                    select
                        clipped.*,
                        sum(clipped.clipped_estimate) over ({{ partition_clause }})
                            as clipped_total,
                        sum(
                            case
                                when clipped.{{ is_unassigned }} then cast(0 as decimal(38, 6))
                                else clipped.clipped_estimate
                            end
                        ) over ({{ partition_clause }}) as assigned_total,
                        coalesce({{ unassigned_policy }} = 'proportional', false)
                            as policy_is_proportional
                    from (
                        select
                            lines_to_allocate.*,
                            case
                                when lines_to_allocate.{{ estimate }} > 0
                                    then cast(lines_to_allocate.{{ estimate }} as decimal(38, 6))
                                else cast(0 as decimal(38, 6))
                            end as clipped_estimate,
                            {{ minor_unit_size(minor_unit_digits) }} as minor_unit
                        from {{ lines }} as lines_to_allocate
                    ) as clipped
                ) as totals
            ) as weighted
        ) as shared
    ) as rounded
) as carried
{%- endmacro %}
