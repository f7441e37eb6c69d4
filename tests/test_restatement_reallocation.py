"""Restated billing is allocated again before anything reads it (SPEC §9, issue 12 §1.6).

A small generated fleet (2026-10-01 .. 2026-11-09) is loaded and built whole. Then a restated
AWS export of October (every cost of Oct 5..7 × 1.2) is loaded and only 2026-11-08 is built:
the build must succeed (before the fix `assert_cluster_day_categories_sum_to_cost` failed on
every restated day, the scope model being rebuilt while the incremental ledger kept the old
lines) and the restated days must rest on the new lines. Then a second restatement (Oct 12 ×
1.5) is loaded and October is closed straight away: the close must allocate Oct 12 again and
seal on the restated lines, so the AWS compute slice's factor stays 1 (to the cent) instead of
reading the stale estimate against the new invoice.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from kubeledger.cli import main
from kubeledger.generate import generate_fleet

COST_COLUMNS = (
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "pricing_public_on_demand_cost",
    "reservation_effective_cost",
    "reservation_net_effective_cost",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_net_savings_plan_effective_cost",
)
CLUSTER = "eks-prod"


def restate(export: Path, out: Path, days: tuple[str, ...], factor: str) -> None:
    """A re-delivered export of the same billing period: the costs of `days` × factor."""
    listed = ", ".join(repr(day) for day in days)
    with duckdb.connect() as con:
        scaled = ", ".join(
            f"case when left(line_item_usage_start_date, 10) in ({listed})"
            f" and {column} is not null and {column} <> '' then "
            f"cast(cast({column} as decimal(38, 10)) * {factor} as varchar) "
            f"else {column} end as {column}"
            for column in COST_COLUMNS
        )
        con.execute(
            f"copy (select * replace ({scaled}) from '{export}') to '{out}' (format parquet)"
        )


def invoke(env: dict[str, str], *args: str):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def scope_and_ledger(db: Path, day: str) -> tuple[float, float]:
    """The day's in-scope AWS billing (current lines) and what the ledger allocated of it."""
    with duckdb.connect(str(db), read_only=True) as con:
        scope, ledger = con.execute(
            "select (select sum(effective_cost) from intermediate.int_billing_lines_scoped "
            "where cluster_id = ? and charge_date = ?), "
            "(select sum(total_cost) from marts.fct_owner_costs_daily "
            "where cluster_id = ? and usage_date = ?)",
            [CLUSTER, day, CLUSTER, day],
        ).fetchone()
    return float(scope), float(ledger)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    out = tmp_path_factory.mktemp("restated_fleet")
    generate_fleet(out, clusters=2, nodes=4, days=40, pods_per_node=4, progress=None)
    env = {
        "KUBELEDGER_DB": str(out / "kubeledger.duckdb"),
        "KUBELEDGER_CONFIG": str(out / "kubeledger.yml"),
        "KUBELEDGER_AS_OF": "2026-11-09",
    }
    for args in (("load", str(out / "landing")), ("build",)):
        result = invoke(env, *args)
        assert result.exit_code == 0, result.output
    return out, env


def test_a_one_day_build_after_a_restatement_reallocates_the_restated_days(fleet):
    out, env = fleet
    db = Path(env["KUBELEDGER_DB"])
    october = out / "landing" / "billing" / "aws" / "2026-10"
    (export,) = sorted(october.glob("*.parquet"))
    before = scope_and_ledger(db, "2026-10-06")
    assert before[0] == pytest.approx(before[1], abs=1e-6)

    restate(
        export, october / "restated-1.parquet", ("2026-10-05", "2026-10-06", "2026-10-07"), "1.2"
    )
    loaded = invoke(env, "load", str(out / "landing"))
    assert loaded.exit_code == 0, loaded.output
    built = invoke(env, "build", "--start", "2026-11-08")
    assert built.exit_code == 0, built.output
    assert "re-allocating 3 days whose billing lines changed" in built.output
    assert "2026-10-05..2026-10-07" in built.output

    after = scope_and_ledger(db, "2026-10-06")
    # the new lines cost 1.2 times the old ones (credits and discounts scaled alike)
    assert after[0] == pytest.approx(before[0] * 1.2, rel=1e-9)
    assert after[1] == pytest.approx(after[0], abs=1e-6)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(
            "select count(*) from marts.fct_cluster_costs_daily "
            "where abs(ledger_cost - (billed_cost_in_scope + estimated_cost + rate_card_cost)) "
            "> 0.000001"
        ).fetchone() == (0,)
        recorded = con.execute(
            "select count(*) from ops.allocated_days where usage_date between "
            "date '2026-10-05' and date '2026-10-07'"
        ).fetchone()
    assert recorded == (3,)

    # nothing changed since: the next build re-allocates nothing
    again = invoke(env, "build", "--start", "2026-11-08")
    assert again.exit_code == 0, again.output
    assert "re-allocating" not in again.output


def test_close_seals_on_the_restated_lines(fleet):
    out, env = fleet
    db = Path(env["KUBELEDGER_DB"])
    october = out / "landing" / "billing" / "aws" / "2026-10"
    restated = october / "restated-1.parquet"
    restate(restated, october / "restated-2.parquet", ("2026-10-12",), "1.5")
    loaded = invoke(env, "load", str(out / "landing"))
    assert loaded.exit_code == 0, loaded.output

    closed = invoke(env, "close", "--month", "2026-10", "--as-of", "2026-11-09")
    assert closed.exit_code == 0, closed.output
    assert "sealed 2026-10 as bill" in closed.output

    with duckdb.connect(str(db), read_only=True) as con:
        scope_total = con.execute(
            "select sum(effective_cost) from intermediate.int_billing_lines_scoped "
            "where cluster_id = ? and cost_family = 'compute' "
            "and charge_date between date '2026-10-01' and date '2026-10-31'",
            [CLUSTER],
        ).fetchone()[0]
        target, estimate, factor = con.execute(
            "select target_cost, estimated_cost, factor from sealed.sealed_bill_clusters "
            "where bill_month = '2026-10' and cluster_id = ? and cost_family = 'compute'",
            [CLUSTER],
        ).fetchone()
        ledger_oct12 = con.execute(
            "select sum(total_cost) from marts.fct_owner_costs_daily "
            "where cluster_id = ? and usage_date = date '2026-10-12'",
            [CLUSTER],
        ).fetchone()[0]
        scope_oct12 = con.execute(
            "select sum(effective_cost) from intermediate.int_billing_lines_scoped "
            "where cluster_id = ? and charge_date = date '2026-10-12'",
            [CLUSTER],
        ).fetchone()[0]
    assert target == Decimal(scope_total).quantize(Decimal("0.01"))
    # the estimate rests on the same lines as the target: the factor is 1 up to the cents
    assert abs(estimate - target) < Decimal("0.01")
    assert abs(factor - 1) < Decimal("0.0001")
    assert float(ledger_oct12) == pytest.approx(float(scope_oct12), abs=1e-6)
