"""The demo's cloud charges outside Kubernetes (generate/cloud_charges.py): each SPEC §10 rule
attributes its line on the generated fleet, with amounts computed by hand from the generator's
prices, and none of the lines is in a cluster's scope. Reuses test_report's fleet build.

By hand, per October (31 days; every AWS net cost is 0.97 x gross, the enterprise discount):
- reservation   g5.xlarge capacity reservation, 24 h x 1.006 x 0.97 x 31 = 726.01008
- resource_group  m5.xlarge, 24 h x 0.192 x 0.97 = 4.46976 a day, x 1.01 (the restated CUR
                re-prices on-demand instance hours): Research Oct 1-15 = 15 x 4.5144576 =
                67.716864, Ops Oct 16-31 = 16 x 4.5144576 = 72.2313216
- deployment    S3, 4,000 GB-month x 0.023 x 0.97 = 89.24
- project_tag   SageMaker notebook, 24 h x 0.23 x 0.97 x 31 = 165.9864
- account_default  the RDS database, 24 h x 0.225 x 0.97 x 31 = 162.378
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.test_report import built_fleet

pytestmark = pytest.mark.slow
OCTOBER = "2026-10-01"


@pytest.fixture(scope="module")
def fleet_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_fleet(tmp_path_factory)


def query(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def test_every_rule_attributes_its_line(fleet_db):
    rows = query(
        fleet_db,
        """
        select attribution_rule, allocation_name, lines.service_name, count(*),
               round(sum(placed.allocation_cost), 6)
        from marts.fct_cloud_charge_allocations as placed
        inner join marts.fct_billing_lines as lines using (billing_line_id)
        where placed.charge_month = ? and placed.placement = 'allocation'
          and lines.service_name in ('AmazonEC2', 'AmazonS3', 'AmazonSageMaker', 'AmazonRDS')
          and (attribution_rule <> 'account_default' or lines.service_name = 'AmazonRDS')
        group by all order by 1, 2
        """,
        [OCTOBER],
    )
    assert rows == [
        ("account_default", "Shared-Services", "AmazonRDS", 31, Decimal("162.378000")),
        ("deployment", "Data-Engineering", "AmazonS3", 31, Decimal("89.240000")),
        ("project_tag", "ML-Platform", "AmazonSageMaker", 31, Decimal("165.986400")),
        ("reservation", "GPU-Research", "AmazonEC2", 31, Decimal("726.010080")),
        ("resource_group", "Ops", "AmazonEC2", 16, Decimal("72.231322")),
        ("resource_group", "Research", "AmazonEC2", 15, Decimal("67.716864")),
    ]


def test_the_resource_group_changes_allocation_mid_month(fleet_db):
    rows = query(
        fleet_db,
        """
        select allocation_name, min(lines.charge_date), max(lines.charge_date)
        from marts.fct_cloud_charge_allocations as placed
        inner join marts.fct_billing_lines as lines using (billing_line_id)
        where placed.charge_month = ? and attribution_rule = 'resource_group'
        group by 1 order by 2
        """,
        [OCTOBER],
    )
    assert [(name, str(first), str(last)) for name, first, last in rows] == [
        ("Research", "2026-10-01", "2026-10-15"),
        ("Ops", "2026-10-16", "2026-10-31"),
    ]


def test_google_and_azure_databases_stay_unattributed(fleet_db):
    rows = query(
        fleet_db,
        """
        select lines.service_name, placed.placement, count(*)
        from marts.fct_cloud_charge_allocations as placed
        inner join marts.fct_billing_lines as lines using (billing_line_id)
        where placed.charge_month = ? and lines.service_name in ('Cloud SQL', 'SQL Database')
        group by all order by 1
        """,
        [OCTOBER],
    )
    assert [(service, placement) for service, placement, _ in rows] == [
        ("Cloud SQL", "unattributed"),
        ("SQL Database", "unattributed"),
    ]


def test_budgets_cross_their_thresholds(fleet_db):
    """GPU-Research 726.01 of 800 (90.8%) crosses 80%; Research 67.72 of 120 (56.4%) crosses
    50%; Ops 72.23 of 200 (36.1%) crosses none of its 80%."""
    rows = dict(
        query(
            fleet_db,
            """select allocation_name, thresholds_crossed from marts.fct_allocation_spend_monthly
               where charge_month = ?""",
            [OCTOBER],
        )
    )
    assert rows["GPU-Research"] == "80% of used"
    assert rows["Research"] == "50% of used"
    assert rows["Ops"] is None


def test_no_demo_cloud_charge_is_in_a_clusters_scope(fleet_db):
    [(in_scope,)] = query(
        fleet_db,
        """
        select count(scoped.billing_line_id)
        from marts.fct_cloud_charge_allocations as placed
        left join intermediate.int_billing_lines_scoped as scoped using (billing_line_id)
        where placed.placement = 'allocation'
        """,
    )
    assert in_scope == 0


def test_the_demo_prints_the_months_allocation_spend(fleet_db):
    from kubeledger import report_console

    printed: list[str] = []
    with duckdb.connect(str(fleet_db), read_only=True) as con:
        report_console.print_allocation_spend(con, "2026-10", printed.append)
    rows = {line.split()[0]: line.split() for line in printed if line.startswith("  ")}
    assert rows["GPU-Research"] == [
        "GPU-Research",
        "31",
        "$726.01",
        "$726.01",
        "$800.00",
        "90.8",
        "80%",
        "of",
        "used",
    ]
    assert rows["Research"][:6] == ["Research", "15", "$67.72", "$67.72", "$120.00", "56.4"]
    assert rows["Ops"][-1] == "-"
