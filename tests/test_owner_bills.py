"""What an owner pays and why (`kubeledger explain --team/--cost-center/--application`,
rpt_owner_bill_explained) and owner budgets (fct_budget_status_daily, the Dagster check and its
webhook), end to end on one on-prem cluster from October 1 to November 10, October sealed.

Nodes of 4 cores / 16 GiB at $1.00/h: the infra node `infra1` (coredns: all $24/day platform)
and the worker `w1` ($24/day), distributed by the `proportional` preset (platform and
infrastructure idle by direct cost; workload idle stays with its owner). Per day on w1:
- pay-0 (payments / shop / checkout) requests 0.5 core 2 GiB (1/8: $3) and uses half of it:
  direct $1.50, workload idle $1.50;
- pay-batch-0 (payments / fin / ledger) 0.5 core 2 GiB used: direct $3.00;
- srch-0 (search / shop / search) 2.5 cores 10 GiB used: direct $15.00;
- unclaimed 1/8: infrastructure idle $3.00.
Direct 1.5 : 3 : 15 = 1 : 2 : 10, so platform 24 and idle 3 go 1/13, 2/13, 10/13.
October (31 days), per owner: pay-0 46.5 + 46.5 + 744/13 + 93/13 = 2046/13 = 157.384615;
pay-batch-0 93 + 1488/13 + 186/13 = 2883/13 = 221.769231; srch-0 465 + 7440/13 + 930/13 =
14415/13 = 1108.846154; together 1488.00 (the rate-card slice's target).
Bill lines (cost-center grain): fin 221.769231 -> 221.76, shop 1266.230769 -> 1266.23 + the
leftover cent (largest estimate) = 1266.24. The shop line over its owners (the close's rule):
157.384615 and 1108.846154 scaled to 1266.24 round down to 157.38 and 1108.85, the cent to
search: 1108.86. Team payments: 221.76 + 157.38 = 379.14; its parts 31 x 4.5 = 139.50 direct,
31 x 1.5 = 46.50 workload idle, 31 x 72/13 = 171.69 platform, 31 x 9/13 = 21.46 infra idle,
estimate 31 x 159/13 = 379.15.
"""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubeledger.cli import main
from kubeledger.config import ConfigError, parse_config
from tests.hourly_landing import POD_COLUMNS, write_csv, write_nodes, write_pod_usage
from tests.warehouse_builder import build_warehouse, close_month, query
from tests.webhook_server import webhook_server

CLUSTER = "dc1"
PODS = [
    (
        "w1",
        "worker",
        "shop",
        "pay-0",
        0.5,
        2,
        "label_team:payments|label_cost_center:shop|label_app:checkout",
    ),
    (
        "w1",
        "worker",
        "batch",
        "pay-batch-0",
        0.5,
        2,
        "label_team:payments|label_cost_center:fin|label_app:ledger",
    ),
    (
        "w1",
        "worker",
        "search",
        "srch-0",
        2.5,
        10,
        "label_team:search|label_cost_center:shop|label_app:search",
    ),
    ("infra1", "infra", "kube-system", "coredns-0", 0.5, 2, ""),
]
BUDGETS = {
    "owners": [
        # 30% = 105.00 of used; 100% of forecast = 350.00
        {
            "team": "payments",
            "monthly_budget": 350,
            "thresholds": [{"percent": 30}, {"percent": 100, "use_estimated": True}],
        },
        # fin costs 93/13 = 7.153846 a day: a 30-day forecast of 214.62 is 21% of 1000
        {
            "cost_center": "fin",
            "monthly_budget": 1000,
            "thresholds": [{"percent": 80, "use_estimated": True}],
        },
        # checkout's sealed October is 157.38 >= 150; November to the 10th 50.77 is not
        {"application": "checkout", "monthly_budget": 100, "thresholds": [{"percent": 150}]},
    ]
}
CONFIG = {
    "clusters": [{"id": CLUSTER, "provider": "on_prem"}],
    "node_prices": [
        {"cluster": CLUSTER, "node": "infra1", "hourly_price": 1.0},
        {"cluster": CLUSTER, "node": "w1", "hourly_price": 1.0},
    ],
    "distribution": {"preset": "proportional"},
    "budgets": BUDGETS,
}
PAYMENTS_DAILY = Decimal(159) / 13  # 4.5 + 1.5 + 72/13 + 9/13


def _landing(landing: Path) -> None:
    day = dt.date(2026, 10, 1)
    while day <= dt.date(2026, 11, 10):
        text = day.isoformat()
        write_pod_usage(
            landing, CLUSTER, text, [(hour, *pod) for hour in range(24) for pod in PODS]
        )
        path = landing / "usage" / CLUSTER / text / "pods.csv"
        with path.open() as handle:
            rows = list(csv.DictReader(handle))
        period_end = "2026-11-01" if day.month == 10 else "2026-12-01"
        for row in rows:
            row["report_period_end"] = f"{period_end} 00:00:00 +0000 UTC"
            if row["pod"] == "pay-0":  # uses half of what it requests
                for key in ("pod_usage_cpu_core_seconds", "pod_usage_memory_byte_seconds"):
                    row[key] = float(row[key]) / 2
        write_csv(path, POD_COLUMNS, rows)
        day += dt.timedelta(days=1)
    write_nodes(landing, CLUSTER, "2026-10-01", ["infra1", "w1"])


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("owner_bills")
    _landing(root / "landing")
    db = build_warehouse(root, root / "landing", CONFIG)
    close_month(db, "2026-10", dt.date(2026, 11, 5))
    return db


def invoke(db: Path, *args: str):
    env = {"KUBELEDGER_DB": str(db), "KUBELEDGER_CONFIG": str(db.parent / "kubeledger.yml")}
    result = CliRunner().invoke(main, list(args), env=env)
    assert result.exit_code == 0, result.output
    return result.output


# --- item 3: what an owner pays, and why ---------------------------------------------------


def test_the_team_explanation_adds_up_to_its_sealed_lines_to_the_cent(warehouse):
    parts = query(
        warehouse,
        """select line_id, bill_state, billed_cost, line_billed_cost
           from marts.rpt_owner_bill_explained
           where bill_month = date '2026-10-01' and team = 'payments' order by line_id""",
    )
    assert parts == [
        ("dc1|compute|fin", "sealed", Decimal("221.76"), Decimal("221.76")),
        ("dc1|compute|shop", "sealed", Decimal("157.38"), Decimal("1266.24")),
    ]
    # the sealed lines themselves, and every owner's part of them
    sealed = dict(
        query(
            warehouse,
            """select line_id, billed_cost from marts.fct_bill_lines_monthly
               where bill_month = date '2026-10-01' and bill_state = 'sealed'
                   and billed_cost <> 0""",
        )
    )
    assert sealed == {"dc1|compute|fin": Decimal("221.76"), "dc1|compute|shop": Decimal("1266.24")}
    owners = query(
        warehouse,
        """select line_id, team, billed_cost from marts.rpt_owner_bill_explained
           where bill_month = date '2026-10-01' order by line_id, team""",
    )
    assert owners == [
        ("dc1|compute|fin", "payments", Decimal("221.76")),
        ("dc1|compute|shop", "payments", Decimal("157.38")),
        ("dc1|compute|shop", "search", Decimal("1108.86")),
    ]
    for line_id, billed in sealed.items():
        assert sum(cost for line, _, cost in owners if line == line_id) == billed


def test_the_mart_takes_the_teams_cost_apart(warehouse):
    [row] = query(
        warehouse,
        """select sum(direct_cost), sum(workload_idle_cost), sum(platform_share_cost),
                  sum(infrastructure_idle_share_cost), sum(other_pools_share_cost),
                  sum(unallocated_cost), sum(estimated_cost), min(factor), sum(billed_cost)
           from marts.rpt_owner_bill_explained
           where bill_month = date '2026-10-01' and team = 'payments'""",
    )
    direct, idle, platform, infra, other, unallocated, estimate, factor, billed = row
    assert direct == Decimal("139.5")
    assert idle == Decimal("46.5")
    assert abs(platform - Decimal(2232) / 13) < Decimal("0.000002")
    assert abs(infra - Decimal(279) / 13) < Decimal("0.000002")
    assert other == 0 and unallocated == 0
    assert abs(estimate - 31 * PAYMENTS_DAILY) < Decimal("0.000002")
    assert factor == 1
    assert billed == Decimal("379.14")


def test_explain_team_prints_the_split_per_cluster_and_family_and_its_lines(warehouse):
    output = invoke(warehouse, "explain", "--team", "payments", "--month", "2026-10")
    lines = output.splitlines()
    assert lines[0].startswith("team payments on the SEALED bill bill-2026-10-")
    [row] = [line for line in lines if line.startswith("dc1 ")]
    assert row.split() == [
        "dc1", "compute", "139.50", "46.50", "171.69", "21.46", "0.00", "0.00", "379.15",
        "1.0000", "$379.14",
    ]  # fmt: skip
    assert "  dc1|compute|fin: $221.76 (the whole line)" in lines
    assert "  dc1|compute|shop: $157.38 of the line's $1,266.24" in lines
    assert "check: team payments billed $379.14 = the sum of its parts of 2 bill line(s)" in output


def test_explain_cost_center_and_application(warehouse):
    shop = invoke(warehouse, "explain", "--cost-center", "shop", "--month", "2026-10")
    # direct 465 + 46.5; idle 46.5; platform 744/13 + 7440/13 = 629.54; infra 1023/13 = 78.69
    [row] = [line for line in shop.splitlines() if line.startswith("dc1 ")]
    assert row.split()[2:] == [
        "511.50", "46.50", "629.54", "78.69", "0.00", "0.00", "1,266.23", "1.0000", "$1,266.24",
    ]  # fmt: skip
    assert "  dc1|compute|shop: $1,266.24 (the whole line)" in shop.splitlines()
    ledger = invoke(warehouse, "explain", "--application", "ledger", "--month", "2026-10")
    [row] = [line for line in ledger.splitlines() if line.startswith("dc1 ")]
    assert row.split()[2:] == [
        "93.00", "0.00", "114.46", "14.31", "0.00", "0.00", "221.77", "1.0000", "$221.76",
    ]  # fmt: skip


def test_explain_line_gains_the_owners_split(warehouse):
    output = invoke(warehouse, "explain", "dc1|compute|shop", "--month", "2026-10")
    rows = {
        line.split()[0]: line.split()[1:] for line in output.splitlines() if line[:4] == " " * 4
    }
    assert rows["search"] == [
        "search", "465.00", "0.00", "572.31", "71.54", "0.00", "0.00", "1,108.85", "$1,108.86",
    ]  # fmt: skip
    assert rows["payments"] == [
        "checkout", "46.50", "46.50", "57.23", "7.15", "0.00", "0.00", "157.38", "$157.38",
    ]  # fmt: skip
    assert "    owners' parts sum to $1,266.24" in output.splitlines()


def test_explain_refuses_two_subjects_and_names_known_teams(warehouse):
    env = {"KUBELEDGER_DB": str(warehouse)}
    both = CliRunner().invoke(
        main, ["explain", "--team", "payments", "--application", "ledger", "--month", "2026-10"],
        env=env,
    )  # fmt: skip
    assert both.exit_code == 2
    assert "give exactly one of LINE_ID (or --line), --team, --cost-center, --application" in (
        both.output
    )
    unknown = CliRunner().invoke(
        main, ["explain", "--team", "nobody", "--month", "2026-10"], env=env
    )
    assert unknown.exit_code == 1
    assert "team nobody has nothing on the sealed bill of 2026-10" in unknown.output
    assert "teams on it include: payments, search" in unknown.output


# --- item 5: budgets per owner --------------------------------------------------------------


def status(db: Path, budget: str, day: str) -> dict:
    [row] = query(
        db,
        """select used_basis, used_cost, recent_daily_average_cost, remaining_days,
                  forecast_cost, thresholds_crossed, newly_crossed
           from marts.fct_budget_status_daily where budget_name = ? and status_date = ?""",
        [budget, day],
    )
    names = ["basis", "used", "average", "remaining", "forecast", "crossed", "newly"]
    return dict(zip(names, row, strict=True))


def test_a_team_budget_forecasts_from_the_ledger_and_crosses_its_thresholds(warehouse):
    tenth = status(warehouse, "team:payments", "2026-11-10")
    assert tenth["basis"] == "ledger"
    assert abs(tenth["used"] - 10 * PAYMENTS_DAILY) < Decimal("0.000002")
    assert abs(tenth["average"] - PAYMENTS_DAILY) < Decimal("0.000002")
    assert tenth["remaining"] == 20
    assert abs(tenth["forecast"] - 30 * PAYMENTS_DAILY) < Decimal("0.00002")  # 366.92
    assert tenth["crossed"] == "30% of used, 100% of forecast"
    assert tenth["newly"] is None
    # used reaches 105.00 on the 9th (9 x 12.23 = 110.08; the 8th: 97.85)
    assert status(warehouse, "team:payments", "2026-11-08")["crossed"] == "100% of forecast"
    assert status(warehouse, "team:payments", "2026-11-09")["newly"] == "30% of used"
    # the first day of data: its window is that one day (12.23 x 31 = 379.15 forecast)
    first = status(warehouse, "team:payments", "2026-10-01")
    assert abs(first["forecast"] - 31 * PAYMENTS_DAILY) < Decimal("0.00002")
    assert first["newly"] == "100% of forecast"


def test_a_sealed_month_ends_on_the_sealed_amount(warehouse):
    end = status(warehouse, "team:payments", "2026-10-31")
    assert end["basis"] == "sealed"
    assert end["used"] == Decimal("379.14")
    assert end["remaining"] == 0 and end["forecast"] == Decimal("379.14")
    checkout = status(warehouse, "application:checkout", "2026-10-31")
    assert (checkout["basis"], checkout["used"], checkout["crossed"]) == (
        "sealed",
        Decimal("157.38"),
        "150% of used",
    )
    # the ledger to date crossed 150.00 the day before: 30 x 66/13 = 152.31 (29 days: 147.23)
    assert checkout["newly"] is None
    before = status(warehouse, "application:checkout", "2026-10-30")
    assert before["basis"] == "ledger"
    assert abs(before["used"] - Decimal(30 * 66) / 13) < Decimal("0.000002")
    assert before["newly"] == "150% of used"
    assert status(warehouse, "application:checkout", "2026-10-29")["crossed"] is None


def test_a_budget_within_its_thresholds_crosses_none(warehouse):
    fin = status(warehouse, "cost_center:fin", "2026-11-10")
    assert abs(fin["forecast"] - Decimal(30 * 93) / 13) < Decimal("0.00002")  # 214.62
    assert fin["crossed"] is None


@pytest.fixture
def webhook():
    with webhook_server() as (url, received):
        yield url, received


def test_the_budget_check_fails_and_posts_the_crossed_budgets(warehouse, webhook, tmp_path):
    from dagster import build_asset_check_context

    from kubeledger.dagster.checks_budgets import budget_thresholds
    from kubeledger.dagster.resources import WarehouseResource

    url, received = webhook
    config = tmp_path / "kubeledger.yml"
    config.write_text(
        yaml.safe_dump({**CONFIG, "budgets": {**BUDGETS, "webhook_url": url}}, sort_keys=False)
    )
    resource = WarehouseResource(
        db_path=str(warehouse), config_path=str(config), as_of="2026-11-10"
    )
    result = budget_thresholds(build_asset_check_context(), warehouse=resource)
    assert not result.passed
    assert result.metadata["crossed"].value == ["team:payments"]
    assert result.metadata["webhook_status"].value == 204
    [message] = received
    assert message["content_type"] == "application/json"
    [budget] = message["json"]["budgets"]
    assert message["json"]["event"] == "budget_threshold_crossed"
    assert (budget["budget_name"], budget["status_date"], budget["monthly_budget"]) == (
        "team:payments",
        "2026-11-10",
        "350.00",
    )
    assert budget["thresholds_crossed"] == "30% of used, 100% of forecast"
    assert budget["used_cost"] == "122.31" and budget["forecast_cost"] == "366.92"
    # as of October 31 the sealed month crosses payments' and checkout's thresholds
    october = WarehouseResource(db_path=str(warehouse), config_path=str(config), as_of="2026-10-31")
    result = budget_thresholds(build_asset_check_context(), warehouse=october)
    assert result.metadata["crossed"].value == ["application:checkout", "team:payments"]
    assert len(received) == 2


def test_a_webhook_that_refuses_fails_the_check_naming_it(warehouse, tmp_path):
    from dagster import build_asset_check_context

    from kubeledger.budgets.alerts import BudgetAlertError
    from kubeledger.dagster.checks_budgets import budget_thresholds
    from kubeledger.dagster.resources import WarehouseResource

    with webhook_server(status=500) as (url, received):
        config = tmp_path / "kubeledger.yml"
        config.write_text(yaml.safe_dump({**CONFIG, "budgets": {**BUDGETS, "webhook_url": url}}))
        resource = WarehouseResource(
            db_path=str(warehouse), config_path=str(config), as_of="2026-11-10"
        )
        with pytest.raises(BudgetAlertError, match=f"budget webhook {url} refused the alert"):
            budget_thresholds(build_asset_check_context(), warehouse=resource)
    assert len(received) == 1


def test_the_budget_check_passes_without_posting_before_any_budget_day(warehouse, webhook):
    from dagster import build_asset_check_context

    from kubeledger.dagster.checks_budgets import budget_thresholds
    from kubeledger.dagster.resources import WarehouseResource

    url, received = webhook
    config = warehouse.parent / "hooked.yml"
    config.write_text(yaml.safe_dump({**CONFIG, "budgets": {**BUDGETS, "webhook_url": url}}))
    resource = WarehouseResource(
        db_path=str(warehouse), config_path=str(config), as_of="2026-09-30"
    )
    result = budget_thresholds(build_asset_check_context(), warehouse=resource)
    assert result.passed
    assert result.metadata["crossed"].value == []
    assert received == []


@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        (
            {"owners": [{"team": "a", "cost_center": "b", "monthly_budget": 1}]},
            "give exactly one of team, cost_center, application (got team, cost_center)",
        ),
        (
            {"owners": [{"team": "a", "monthly_budget": 1}, {"team": "a", "monthly_budget": 2}]},
            "team:a already has a budget (owners[0])",
        ),
        ({"webhook_url": "hooks.example.com"}, "'hooks.example.com' is not an http(s) URL"),
        (
            {"owners": [{"team": "a", "monthly_budget": 1, "thresholds": [{"percent": 80}] * 2}]},
            "the 80% threshold is listed twice",
        ),
        (
            {"owners": [{"team": "a", "currency": "EUR", "monthly_budget": 1}]},
            "team:a's budget is in EUR, the costs in USD, and no exchange_rates entry converts EUR",
        ),
    ],
)
def test_bad_budgets_are_refused_with_their_place(budgets, message):
    with pytest.raises(ConfigError, match="budgets") as error:
        parse_config({"budgets": budgets})
    assert message in str(error.value)


def test_a_budget_in_a_currency_with_a_rate_is_accepted():
    config = parse_config(
        {
            "exchange_rates": [{"from": "EUR", "rate": "1.25", "effective_from": "2026-10-01"}],
            "budgets": {"owners": [{"team": "a", "currency": "EUR", "monthly_budget": 1}]},
        }
    )
    assert [(row["budget_name"], row["currency"]) for row in config.tables["owner_budgets"]] == [
        ("team:a", "EUR")
    ]


def test_budgets_become_config_tables():
    config = parse_config({"currency": "EUR", **{"budgets": BUDGETS}})
    assert [
        (row["budget_name"], row["owner_dimension"], row["currency"], row["monthly_budget"])
        for row in config.tables["owner_budgets"]
    ] == [
        ("team:payments", "team", "EUR", 350),
        ("cost_center:fin", "cost_center", "EUR", 1000),
        ("application:checkout", "application", "EUR", 100),
    ]
    assert [
        (row["budget_name"], row["threshold_percent"], row["use_estimated"])
        for row in config.tables["owner_budget_thresholds"]
    ] == [
        ("team:payments", 30, False),
        ("team:payments", 100, True),
        ("cost_center:fin", 80, True),
        ("application:checkout", 150, False),
    ]


def test_the_report_and_the_console_show_the_budgets(warehouse):
    import re

    import duckdb

    from kubeledger.report.data import load_report_data
    from kubeledger.report.render import render_report
    from kubeledger.report_console import print_budget_status

    with duckdb.connect(str(warehouse), read_only=True) as con:
        html_text = render_report(load_report_data(con, "2026-11"))
        printed: list[str] = []
        print_budget_status(con, "2026-11", printed.append)
    start = html_text.index('id="budgets"')
    section = html_text[start : html_text.index("</section>", start)]
    assert "1 budget over a threshold: team:payments." in section
    rows = re.findall(
        r"<tr( class=\"over-budget\")?><td class=\"\">([^<]+)</td>(.*?)</tr>", section
    )
    assert [(name, bool(flag)) for flag, name, _ in rows] == [
        ("team:payments", True),
        ("application:checkout", False),  # forecast 152.3% but its threshold is on used
        ("cost_center:fin", False),
    ]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", rows[0][2])
    assert cells == [
        "2026-11-10", "$350.00", "$122.31", "ledger", "$366.92", "34.95%", "104.84%",
        "30% of used, 100% of forecast",
    ]  # fmt: skip
    [payments] = [line.split() for line in printed if line.startswith("  team:payments")]
    assert payments[:7] == ["team:payments", "2026-11-10", "350.00", "122.31", "ledger", "366.92",
                            "104.84"]  # fmt: skip
