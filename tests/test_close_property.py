"""Property test of the monthly close (SPEC §14): 20,000 random attribution reports through
the project's own close models, all of them in one build per unassigned policy.

Each report is one cluster's compute slice of a month: 1-30 lines whose amounts include
zeros, tiny and negative ones, and sometimes nothing attributed at all; about a third have
no billing link (no invoice), the others an invoice that is random (factors from 0.1 to 10,
so some fall outside the bounds and fall back), zero, negative (some by less than half a
minor unit), or missing (a link that
selects no line). 10,000 reports are September 2026 under policy `separate`, 10,000 October
under `proportional`. A third of the clusters bill in US dollars (2 decimals), a third in yen
(0) and a third in Kuwaiti dinars (3): every report must bill exactly its target (`=` on
decimal(38, 3), each amount a whole number of its currency's minor unit), no line negative,
factor 1.0 when not reconciled, fewer carried cents than lines; and a sample is recomputed
with exact fractions in Python, line by line.
"""

from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction

import duckdb

from tests.test_close_support import close_project, new_warehouse, run_dbt  # noqa: F401

REPORTS_PER_MONTH = 10_000
MONTHS = {"2026-09": ("separate", "2026-09-30"), "2026-10": ("proportional", "2026-10-31")}
AS_OF = "2026-11-30"  # past both deadlines: every slice is final
# Minor-unit digits by ISO 4217 (written here, not read from the seed or Babel: an oracle).
DIGITS = {"USD": 2, "JPY": 0, "KWD": 3}


def generate_reports(con: duckdb.DuckDBPyConnection) -> None:
    """The random reports, their lines and the mock inputs they make, all in SQL."""
    # one thread: DuckDB's random() draws the same numbers on every run only single-threaded
    con.execute("set threads = 1")
    con.execute("select setseed(0.20261031)")
    con.execute(
        f"""
        create table reports as
        select
            report_id,
            case when report_id <= {REPORTS_PER_MONTH} then '2026-09' else '2026-10' end
                as bill_month,
            case when report_id <= {REPORTS_PER_MONTH} then date '2026-09-30'
                else date '2026-10-31' end as usage_date,
            'r' || lpad(cast(report_id as varchar), 5, '0') as cluster_id,
            1 + cast(floor(random() * 30) as integer) as line_count,
            random() as kind_draw,
            random() < 0.03 as nothing_attributed,
            pow(10, random() * 2 - 1) as invoice_multiplier,
            case report_id % 3 when 0 then 'USD' when 1 then 'JPY' else 'KWD' end as currency
        from range(1, {2 * REPORTS_PER_MONTH + 1}) as ids(report_id)
        """
    )
    con.execute(
        """
        create table report_kinds as
        select
            *,
            case
                when kind_draw < 0.34 then 'no_link'
                when kind_draw < 0.40 then 'zero'
                when kind_draw < 0.46 then 'negative'
                when kind_draw < 0.50 then 'empty'
                else 'invoice'
            end as invoice_kind
        from reports
        """
    )
    con.execute(
        """
        create table report_lines as
        select
            report_id,
            cluster_id,
            usage_date,
            line_no,
            -- the last line of about half the reports is unowned cost (__unassigned__)
            case
                when line_no = line_count and owner_draw < 0.5 then null
                else 'cc-' || lpad(cast(line_no as varchar), 2, '0')
            end as cost_center,
            case
                when nothing_attributed then 0
                when draw < 0.15 then 0
                when draw < 0.30 then round(size_draw * 0.01, 6)
                when draw < 0.33 then -round(size_draw * 5, 6)
                when draw < 0.38 then round(size_draw * 100000, 6)
                else round(size_draw * 1000, 6)
            end as total_cost
        from (
            select
                reports.*,
                line_no,
                random() as draw,
                random() as size_draw,
                random() as owner_draw
            from report_kinds as reports,
                unnest(range(1, reports.line_count + 1)) as lines_(line_no)
        ) as drawn
        """
    )
    con.execute(
        """
        insert into mock.fct_owner_costs_daily
        select cluster_id, usage_date, 'compute',
            case when cost_center is null then null else 'team-' || cost_center end,
            cost_center, 'app', case when cost_center is null then 'unowned' else 'owned' end,
            total_cost
        from report_lines
        """
    )
    con.execute(
        """
        insert into mock.stg_config__clusters
        select cluster_id, 'aws', invoice_kind <> 'no_link', currency, null, null, null
        from report_kinds
        """
    )
    con.execute(
        """
        insert into mock.fct_reconciliation_daily
        select cluster_id, usage_date, true, false from report_kinds
        """
    )
    con.execute(
        """
        insert into mock.int_billing_lines_scoped
        select
            kinds.cluster_id || '-line-' || part, kinds.cluster_id, kinds.usage_date,
            'compute', 'instance', 'i-' || kinds.cluster_id, 'matched',
            case
                when kinds.invoice_kind = 'zero' then 0
                -- a fifth of the negative slices are under half a minor unit (-0.0004 in all):
                -- negative before rounding, so no invoice, never a zero invoice
                when kinds.invoice_kind = 'negative' and kinds.report_id % 5 = 0 then -0.0002
                when kinds.invoice_kind = 'negative' then -round(random() * 100, 4) / 2
                else round(
                    greatest(estimates.total, 0) * kinds.invoice_multiplier + random() * 50, 10
                ) / 2
            end,
            'aws', 'acct-1'
        from report_kinds as kinds
        inner join (
            select report_id, sum(greatest(total_cost, 0)) as total
            from report_lines group by report_id
        ) as estimates on kinds.report_id = estimates.report_id
        cross join range(2) as parts(part)
        where kinds.invoice_kind in ('zero', 'negative', 'invoice')
        """
    )


def expected_lines(
    lines: list[tuple], target: Decimal, policy: str, digits: int = 2
) -> dict[str, Decimal]:
    """SPEC §9's rule with exact fractions, in units of 10**-digits (the currency's minor
    unit): (line_id, estimate, is_unassigned) -> billed."""
    scale = 10**digits
    weights = {line_id: max(Fraction(estimate), Fraction(0)) for line_id, estimate, _ in lines}
    unassigned = next(line_id for line_id, _, is_unassigned in lines if is_unassigned)
    others = sum(weight for line_id, weight in weights.items() if line_id != unassigned)
    if policy == "proportional" and others > 0:
        weights[unassigned] = Fraction(0)
    total = sum(weights.values())
    units = target * scale
    assert units == int(units), (target, digits)  # the target is a whole number of units
    cents = int(units)
    if total == 0:
        return {
            line_id: Decimal(cents if line_id == unassigned else 0) / scale for line_id in weights
        }
    floors = {line_id: (weight * cents) // total for line_id, weight in weights.items()}
    leftover = cents - sum(floors.values())
    order = sorted(weights, key=lambda line_id: (-weights[line_id], line_id.encode()))
    for line_id in order[:leftover]:
        floors[line_id] += 1
    return {line_id: Decimal(value) / scale for line_id, value in floors.items()}


def test_twenty_thousand_random_reports_balance_to_the_cent(close_project, tmp_path):  # noqa: F811
    db = new_warehouse(tmp_path / "property.duckdb")
    with duckdb.connect(str(db)) as con:
        generate_reports(con)
        assert con.execute("select count(*) from reports").fetchone()[0] == 20_000

    for month, (policy, _last_day) in MONTHS.items():
        with duckdb.connect(str(db)) as con:
            con.execute("update mock.stg_config__settings set unassigned_policy = ?", [policy])
        # One build per policy: every report of the month in one query per model; the build
        # also runs the close's data tests (lines sum to target, none negative, ...).
        run_dbt(
            close_project,
            db,
            ["build", "--select", "tag:close", "--exclude-resource-type", "unit_test"],
            {"close_month": month, "as_of": AS_OF},
        )

    with duckdb.connect(str(db)) as con:
        summary = con.execute(
            """
            with per_report as (
                select
                    targets.bill_month,
                    targets.cluster_id,
                    any_value(targets.target_cost) as target_cost,
                    any_value(targets.estimated_cost) as estimated_cost,
                    any_value(targets.invoice_cost) as invoice_cost,
                    any_value(targets.is_reconciled) as is_reconciled,
                    any_value(targets.factor) as factor,
                    any_value(targets.basis) as basis,
                    any_value(targets.close_status) as close_status,
                    sum(lines.billed_cost) as billed_cost,
                    count(lines.line_id) as allocated_line_count,
                    count(*) filter (where lines.is_carry_cent) as carried_cents,
                    count(*) filter (where lines.billed_cost < 0) as negative_lines,
                    count(*) filter (where lines.is_unassigned) as unassigned_lines
                from intermediate.int_bill_targets_monthly as targets
                left join intermediate.int_bill_lines_allocated as lines
                    on targets.bill_month = lines.bill_month
                    and targets.cluster_id = lines.cluster_id
                    and targets.cost_family = lines.cost_family
                group by targets.bill_month, targets.cluster_id
            )
            select
                count(*) as reports,
                count(*) filter (where not (billed_cost = target_cost)) as unbalanced,
                count(*) filter (where negative_lines > 0) as with_negative_lines,
                count(*) filter (where target_cost < 0) as negative_targets,
                count(*) filter (where not is_reconciled and factor <> 1) as bad_factors,
                count(*) filter (where carried_cents >= allocated_line_count) as too_many_cents,
                count(*) filter (where unassigned_lines <> 1) as without_one_unassigned,
                count(*) filter (where kinds.invoice_kind = 'no_link' and is_reconciled)
                    as no_link_reconciled,
                count(*) filter (
                    where kinds.invoice_kind = 'no_link'
                    and not (target_cost = case kinds.currency
                        when 'JPY' then cast(cast(estimated_cost as decimal(38, 0))
                            as decimal(38, 3))
                        when 'KWD' then cast(estimated_cost as decimal(38, 3))
                        else cast(cast(estimated_cost as decimal(38, 2)) as decimal(38, 3))
                    end)
                ) as no_link_not_estimate,
                count(*) filter (
                    where billed_cost * case kinds.currency when 'JPY' then 1
                        when 'KWD' then 1000 else 100 end
                    <> floor(billed_cost * case kinds.currency when 'JPY' then 1
                        when 'KWD' then 1000 else 100 end)
                    or target_cost * case kinds.currency when 'JPY' then 1
                        when 'KWD' then 1000 else 100 end
                    <> floor(target_cost * case kinds.currency when 'JPY' then 1
                        when 'KWD' then 1000 else 100 end)
                ) as not_in_minor_units,
                count(*) filter (where kinds.invoice_kind = 'negative' and is_reconciled)
                    as negative_reconciled,
                count(*) filter (where is_reconciled and not (target_cost = invoice_cost))
                    as reconciled_not_invoice,
                count(*) filter (where close_status = 'blocked') as still_blocked,
                count(*) filter (where not is_reconciled) as estimated,
                count(*) filter (where kinds.invoice_kind = 'zero' and is_reconciled
                    and estimated_cost > 0 and not (factor = 0)) as zero_invoice_not_factor_0,
                count(*) filter (where carried_cents > 0) as with_carried_cents
            from per_report
            inner join report_kinds as kinds on per_report.cluster_id = kinds.cluster_id
            """
        ).fetchone()
        names = [
            "reports",
            "unbalanced",
            "with_negative_lines",
            "negative_targets",
            "bad_factors",
            "too_many_cents",
            "without_one_unassigned",
            "no_link_reconciled",
            "no_link_not_estimate",
            "not_in_minor_units",
            "negative_reconciled",
            "reconciled_not_invoice",
            "still_blocked",
            "estimated",
            "zero_invoice_not_factor_0",
            "with_carried_cents",
        ]
        result = dict(zip(names, summary, strict=True))
        assert result["reports"] == 20_000
        for invariant in names[1:13] + ["zero_invoice_not_factor_0"]:
            assert result[invariant] == 0, (invariant, result)
        # The generated cases do exercise the rules: a third estimated, most with cents carried.
        assert 6_000 < result["estimated"] < 12_000, result
        assert result["with_carried_cents"] > 10_000, result

        # Line by line against exact fractions, on a sample of reports of both policies.
        sample = sorted(random.Random(7).sample(range(1, 20_001), 400))
        rows = con.execute(
            """
            select lines.bill_month, lines.cluster_id, lines.line_id, lines.estimated_cost,
                lines.is_unassigned, lines.target_cost, lines.billed_cost, kinds.currency
            from intermediate.int_bill_lines_allocated as lines
            inner join report_kinds as kinds on lines.cluster_id = kinds.cluster_id
            where kinds.report_id in (select unnest(?))
            """,
            [sample],
        ).fetchall()
    reports: dict[tuple, list] = defaultdict(list)
    for month, cluster, line_id, estimate, unassigned, target, billed, currency in rows:
        reports[(month, cluster, target, currency)].append((line_id, estimate, unassigned, billed))
    assert len(reports) == len(sample)
    assert {key[3] for key in reports} == {"USD", "JPY", "KWD"}
    for (month, _cluster, target, currency), lines in reports.items():
        expected = expected_lines(
            [(line_id, estimate, unassigned) for line_id, estimate, unassigned, _ in lines],
            target,
            MONTHS[month][0],
            DIGITS[currency],
        )
        assert {line_id: billed for line_id, _, _, billed in lines} == expected


def test_expected_lines_reference_matches_the_article():
    # The Python reference itself, on reference 001's example.
    assert expected_lines(
        [
            ("c|compute|a", Decimal("1"), False),
            ("c|compute|b", Decimal("1"), False),
            ("c|compute|c", Decimal("1"), False),
            ("c|compute|__unassigned__", Decimal("0"), True),
        ],
        Decimal("10.00"),
        "separate",
    ) == {
        "c|compute|a": Decimal("3.34"),
        "c|compute|b": Decimal("3.33"),
        "c|compute|c": Decimal("3.33"),
        "c|compute|__unassigned__": Decimal("0"),
    }


def test_expected_lines_reference_in_yen_and_dinars():
    # The same three lines in a currency without decimals and in one with three.
    lines = [
        ("c|compute|a", Decimal("1"), False),
        ("c|compute|b", Decimal("1"), False),
        ("c|compute|c", Decimal("1"), False),
        ("c|compute|__unassigned__", Decimal("0"), True),
    ]
    assert expected_lines(lines, Decimal("1000"), "separate", 0) == {
        "c|compute|a": Decimal("334"),
        "c|compute|b": Decimal("333"),
        "c|compute|c": Decimal("333"),
        "c|compute|__unassigned__": Decimal("0"),
    }
    assert expected_lines(lines, Decimal("10.000"), "separate", 3) == {
        "c|compute|a": Decimal("3.334"),
        "c|compute|b": Decimal("3.333"),
        "c|compute|c": Decimal("3.333"),
        "c|compute|__unassigned__": Decimal("0"),
    }


def test_currency_seed_is_babel_and_iso():
    """The seed the close reads equals Babel's data (regenerate it with `python -m
    kubeledger.currency` after a Babel upgrade), with ISO 4217's digits for a few codes."""
    import csv

    from kubeledger.currency import SEED, seed_rows

    with SEED.open() as handle:
        rows = [(row["currency"], int(row["minor_unit_digits"])) for row in csv.DictReader(handle)]
    assert rows == seed_rows()
    digits = dict(rows)
    assert {code: digits[code] for code in ("JPY", "USD", "EUR", "KWD", "BHD", "KRW")} == {
        "JPY": 0,
        "USD": 2,
        "EUR": 2,
        "KWD": 3,
        "BHD": 3,
        "KRW": 0,
    }
    assert "CLF" not in digits  # 4 digits: wider than a bill column
