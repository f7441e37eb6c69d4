"""The close procedure end to end on a scratch warehouse: dbt builds the close models over
mock inputs, kubeledger.close.closer decides and seals."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest

from kubeledger.close.closer import CloseError, build_close_models, close_month, correct_month
from kubeledger.close.seal import SCHEMA, AlreadySealedError
from tests.test_close_support import (  # noqa: F401
    add_cluster,
    add_month,
    close_project,
    new_warehouse,
    run_dbt,
    sealed_counts,
)

MONTH = "2026-10"
GRACE_END = dt.date(2026, 11, 4)  # Oct 31 + 4 days
DEADLINE = dt.date(2026, 11, 10)  # Oct 31 + 10 days


def warehouse(tmp_path, clusters: dict[str, dict]) -> str:
    """A warehouse with one October per cluster: {cluster: add_month keyword arguments}."""
    db = new_warehouse(tmp_path / "close.duckdb")
    with duckdb.connect(str(db)) as con:
        for cluster, month in clusters.items():
            add_cluster(con, cluster, linked=month.pop("linked", True))
            add_month(con, cluster, MONTH, **month)
    return str(db)


# c1: three cost centers of 1.00 a day against an invoice of 10.00 a day -> factor 3.33 (in
# the bounds), 310.00 over 93 estimated: 103.34 / 103.33 / 103.33, the cent to cc-a.
C1 = {"daily_costs": {"cc-a": 1.0, "cc-b": 1.0, "cc-c": 1.0}, "daily_invoice": 10.0}


def test_a_month_closes_only_after_the_grace_window_and_with_every_day(close_project, tmp_path):  # noqa: F811
    db = warehouse(
        tmp_path,
        {
            "c1": dict(C1),
            "c2": {
                "daily_costs": {"cc-a": 2.0, "__unassigned__": 1.0},
                "daily_invoice": 3.0,
                "incomplete_days": (dt.date(2026, 10, 17),),
            },
        },
    )
    build_close_models(db, MONTH, GRACE_END, project=close_project)
    with pytest.raises(CloseError) as early:
        close_month(db, MONTH, dt.date(2026, 11, 3), project=close_project, run_dbt=False)
    assert "month 2026-10 cannot close before 2026-11-04" in str(early.value)

    with pytest.raises(CloseError) as incomplete:
        close_month(db, MONTH, GRACE_END, project=close_project, run_dbt=False)
    assert "cluster c2: 2026-10-17" in str(incomplete.value)
    assert "from the deadline 2026-11-10 on they seal as estimated" in str(incomplete.value)
    assert [row["cluster_id"] for row in incomplete.value.rows] == ["c2"]
    with duckdb.connect(db) as con:
        assert (
            con.execute(
                "select count(*) from information_schema.tables where table_schema = 'sealed'"
            ).fetchone()[0]
            == 0
        )

    # At the deadline the day seals as estimated: invoice of the 30 complete days (90.00) +
    # the estimate of the 17th (3.00); the month is partial.
    result = close_month(db, MONTH, DEADLINE, project=close_project)
    assert result.bill.bill_status == "partial"
    assert result.bill.estimated_clusters == ["c2"]
    with duckdb.connect(db) as con:
        c2 = con.execute(
            f"select target_cost, basis, close_status, reason, is_reconciled, days_missing "
            f"from {SCHEMA}.sealed_bill_clusters where cluster_id = 'c2'"
        ).fetchone()
        assert c2 == (
            Decimal("93.00"),
            "invoice_and_estimate",
            "estimated_fallback",
            "incomplete_days",
            False,
            1,
        )
        lines = dict(
            con.execute(
                f"select line_id, billed_cost from {SCHEMA}.sealed_bill_lines order by line_id"
            ).fetchall()
        )
    assert lines == {
        "c1|compute|__unassigned__": Decimal("0.00"),
        "c1|compute|cc-a": Decimal("103.34"),
        "c1|compute|cc-b": Decimal("103.33"),
        "c1|compute|cc-c": Decimal("103.33"),
        "c2|compute|__unassigned__": Decimal("31.00"),
        "c2|compute|cc-a": Decimal("62.00"),
    }


def test_a_factor_out_of_bounds_blocks_then_falls_back_at_the_deadline(close_project, tmp_path):  # noqa: F811
    db = warehouse(
        tmp_path,
        {
            "c1": dict(C1),
            # 6.00 a day invoiced against 1.00 estimated: factor 6 > 5, a wrong billing link.
            "c9": {"daily_costs": {"cc-x": 0.5, "cc-y": 0.5}, "daily_invoice": 6.0},
        },
    )
    with pytest.raises(CloseError) as blocked:
        close_month(db, MONTH, dt.date(2026, 11, 9), project=close_project)
    message = str(blocked.value)
    assert (
        "c9 compute: factor_out_of_bounds (factor 6.0000 outside [0.2, 5]: invoice 186.00"
        in message
    )
    assert "from the deadline 2026-11-10 on" in message
    assert [
        (row["cluster_id"], row["close_status"], row["invoice_factor"])
        for row in blocked.value.rows
    ] == [("c9", "blocked", Decimal("6.0000000000"))]

    result = close_month(db, MONTH, DEADLINE, project=close_project)
    assert result.bill.bill_status == "partial"
    assert result.bill.estimated_clusters == ["c9"]
    assert result.bill.target_cost == Decimal("341.00")  # 310.00 invoiced + 31.00 estimated
    with duckdb.connect(db) as con:
        assert con.execute(
            f"select close_status, reason, basis, target_cost, factor, invoice_factor "
            f"from {SCHEMA}.sealed_bill_clusters where cluster_id = 'c9'"
        ).fetchone() == (
            "estimated_fallback",
            "factor_out_of_bounds",
            "estimate",
            Decimal("31.00"),
            Decimal("1.0000000000"),
            Decimal("6.0000000000"),
        )


def test_a_sealed_month_survives_a_second_close_and_a_full_refresh(close_project, tmp_path):  # noqa: F811
    db = warehouse(tmp_path, {"c1": dict(C1)})
    first = close_month(db, MONTH, GRACE_END, project=close_project)
    assert first.bill.bill_status == "full"
    with duckdb.connect(db) as con:
        before = {
            table: con.execute(f"select * from {SCHEMA}.{table} order by all").fetchall()
            for table in (
                "sealed_bills",
                "sealed_bill_clusters",
                "sealed_bill_lines",
                "sealed_billing_line_refs",
            )
        }
    with pytest.raises(AlreadySealedError) as again:
        close_month(db, MONTH, GRACE_END + dt.timedelta(days=1), project=close_project)
    assert f"already sealed as bill {first.bill.bill_id}" in str(again.value)
    assert isinstance(again.value.__cause__, duckdb.ConstraintException)

    # A full rebuild of every model, marts included, leaves the sealed store as it was.
    run_dbt(
        close_project,
        db,
        ["build", "--full-refresh", "--exclude-resource-type", "unit_test"],
        {"as_of": "2026-11-20"},
    )
    with duckdb.connect(db) as con:
        for table, rows in before.items():
            assert con.execute(f"select * from {SCHEMA}.{table} order by all").fetchall() == rows
        # The bill mart shows the sealed lines for the sealed month.
        assert con.execute(
            "select bill_state, count(*), sum(billed_cost) from marts.fct_bill_lines_monthly "
            "group by bill_state"
        ).fetchall() == [("sealed", 4, Decimal("310.00"))]


def test_a_restatement_after_the_seal_becomes_a_correction(close_project, tmp_path):  # noqa: F811
    db = warehouse(tmp_path, {"c1": dict(C1)})
    bill = close_month(db, MONTH, GRACE_END, project=close_project).bill
    with duckdb.connect(db) as con:
        # The provider restates the 31st: 10.00 -> 10.31.
        con.execute(
            "update mock.int_billing_lines_scoped set effective_cost = 10.31 "
            "where charge_date = date '2026-10-31'"
        )
    build_close_models(db, MONTH, dt.date(2026, 11, 25), project=close_project)
    with duckdb.connect(db) as con:
        assert con.execute(
            "select bill_state, has_pending_correction, billed_cost "
            "from marts.fct_bill_close_status"
        ).fetchall() == [("sealed", True, Decimal("310.00"))]

    result = correct_month(db, MONTH, dt.date(2026, 11, 25), project=close_project)
    correction = result.correction
    assert correction is not None
    assert (correction.correction_id, correction.delta_cost) == (
        f"{bill.bill_id}-c1",
        Decimal("0.31"),
    )
    with duckdb.connect(db) as con:
        # 310.31 over three equal lines: 103.43 each + 2 cents to cc-a and cc-b (the tie's
        # smallest IDs) -> 103.44 / 103.44 / 103.43, against 103.34 / 103.33 / 103.33 sealed.
        assert dict(
            con.execute(
                f"select line_id, delta_cost from {SCHEMA}.correction_bill_lines order by line_id"
            ).fetchall()
        ) == {
            "c1|compute|cc-a": Decimal("0.10"),
            "c1|compute|cc-b": Decimal("0.11"),
            "c1|compute|cc-c": Decimal("0.10"),
        }
        assert con.execute(f"select sum(billed_cost) from {SCHEMA}.sealed_bill_lines").fetchone()[
            0
        ] == Decimal("310.00")
        assert con.execute(
            "select has_pending_correction from marts.fct_bill_close_status"
        ).fetchall() == [(False,)]
        assert con.execute(
            "select sum(corrected_billed_cost) from marts.fct_bill_lines_monthly"
        ).fetchone()[0] == Decimal("310.31")
    assert sealed_counts_after(db) == {"correction_bills": 1, "correction_bill_lines": 3}


def sealed_counts_after(db: str) -> dict[str, int]:
    with duckdb.connect(db) as con:
        counts = sealed_counts(con)
    return {name: counts[name] for name in ("correction_bills", "correction_bill_lines")}
