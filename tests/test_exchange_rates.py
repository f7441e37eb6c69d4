"""Exchange rates (SPEC §3.3, issue 14 §1): a billing account whose lines come in two
currencies is refused unless `exchange_rates:` converts the others into the billing
currency; with a rate table every cost column is converted by the rate in effect on the
line's charge date, end to end.

One EKS cluster in a USD account (`currency: USD`, the default); CUR 2.0 lines, hand-computed:

- ip-a (i-0aaa) costs $4.80 a day in USD; ip-b (i-0bbb) €2.3456789012 a day in EUR.
- Rates EUR → USD: 1.08 from 2026-10-01, 1.1235 from 2026-10-15 (a change mid-month).
- Oct 14: 2.3456789012 × 1.08 = 2.533333213296 → 2.5333332133 (10 places, half up: the
  truncated value would be …2132). Scope 4.80 + 2.5333332133 = 7.3333332133.
- Oct 15 (the new rate's first day): 2.3456789012 × 1.1235 = 2.6353702454982 →
  2.6353702455. Scope 4.80 + 2.6353702455 = 7.4353702455.
- Without a table, both EUR lines (rows 2 and 4 of the file) are refused by the gate, naming
  file, row and currency; with a table starting on Oct 15 only row 2 (Oct 14) is.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from kubeledger.quality_gate import QualityGateError
from tests.test_pricing_real_shapes import CUR_COLUMNS, NODE_LABEL_COLUMNS, POD_COLUMNS
from tests.test_pricing_real_shapes import _instance as instance
from tests.test_pricing_real_shapes import _write_csv as write_csv
from tests.warehouse_builder import build_warehouse, query

CLUSTER = "eks-prod"
ACCOUNT = "111111111111"
GIB = 1024**3
DAYS = ["2026-10-14", "2026-10-15"]
NODES = {"ip-a": "i-0aaa", "ip-b": "i-0bbb"}
CUR_FILE = "billing/aws/2026-10/cur2-00001.csv"
RATES = [
    {"from": "EUR", "to": "USD", "rate": 1.08, "effective_from": "2026-10-01"},
    {"from": "EUR", "to": "USD", "rate": 1.1235, "effective_from": "2026-10-15"},
]


def _usage_day(landing: Path, day: str, number: int) -> None:
    folder = landing / "usage" / CLUSTER / day
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "uuid": f"5f1e8a3c-0000-4000-8000-{number:012d}",
                "cluster_id": CLUSTER,
                "version": "3.3.0",
                "date": f"{day}T23:59:00Z",
                "files": ["pods.csv", "node-labels.csv"],
            }
        )
    )
    start = dt.datetime.fromisoformat(day)
    stamp = "%Y-%m-%d %H:%M:%S +0000 UTC"
    pods, labels = [], []
    for node, instance_id in NODES.items():
        for hour in range(24):
            begin = start + dt.timedelta(hours=hour)
            period = {
                "report_period_start": "2026-10-01 00:00:00 +0000 UTC",
                "report_period_end": "2026-11-01 00:00:00 +0000 UTC",
                "interval_start": begin.strftime(stamp),
                "interval_end": (begin + dt.timedelta(minutes=59, seconds=59)).strftime(stamp),
                "node": node,
            }
            pods.append(
                {
                    **period,
                    "namespace": "shop",
                    "pod": f"{node}-worker",
                    "pod_usage_cpu_core_seconds": 2 * 3600,
                    "pod_request_cpu_core_seconds": 2 * 3600,
                    "pod_limit_cpu_core_seconds": 2 * 3600,
                    "pod_usage_memory_byte_seconds": 8 * GIB * 3600,
                    "pod_request_memory_byte_seconds": 8 * GIB * 3600,
                    "pod_limit_memory_byte_seconds": 8 * GIB * 3600,
                    "node_capacity_cpu_cores": 4,
                    "node_capacity_cpu_core_seconds": 4 * 3600,
                    "node_capacity_memory_bytes": 16 * GIB,
                    "node_capacity_memory_byte_seconds": 16 * GIB * 3600,
                    "node_role": "worker",
                    "resource_id": instance_id,
                    "pod_labels": "label_team:shop",
                }
            )
            labels.append(
                {
                    **period,
                    "node_labels": "label_node_kubernetes_io_instance_type:m5.xlarge"
                    "|label_topology_kubernetes_io_region:us-east-1"
                    "|label_eks_amazonaws_com_capacityType:ON_DEMAND",
                }
            )
    write_csv(folder / "pods.csv", POD_COLUMNS, pods)
    write_csv(folder / "node-labels.csv", NODE_LABEL_COLUMNS, labels)


def _landing(root: Path) -> Path:
    landing = root / "landing"
    for number, day in enumerate(DAYS, start=1):
        _usage_day(landing, day, number)
    write_csv(
        landing / "cluster" / CLUSTER / "nodes.csv",
        ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
        [
            {
                "cluster_id": CLUSTER,
                "node": node,
                "provider_id": f"aws:///us-east-1a/{instance_id}",
                "first_seen": f"{DAYS[0]}T00:00:00Z",
                "last_seen": f"{DAYS[-1]}T23:59:59Z",
            }
            for node, instance_id in NODES.items()
        ],
    )
    lines = []
    for day in DAYS:
        lines.append(instance(ACCOUNT, len(lines) + 1, day, "i-0aaa", "4.80", "m5.xlarge"))
        eur = instance(ACCOUNT, len(lines) + 1, day, "i-0bbb", "2.3456789012", "m5.xlarge")
        eur["line_item_currency_code"] = "EUR"
        lines.append(eur)
    write_csv(landing / CUR_FILE, CUR_COLUMNS, lines)
    return landing


def _config(rates: list[dict] | None) -> dict:
    config: dict = {
        "clusters": [{"id": CLUSTER, "provider": "aws", "billing_link": {"accounts": [ACCOUNT]}}]
    }
    if rates is not None:
        config["exchange_rates"] = rates
    return config


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("exchange_rates")
    return build_warehouse(root, _landing(root), _config(RATES))


def _refusal(tmp_path: Path, rates: list[dict] | None) -> str:
    with pytest.raises(QualityGateError) as refused:
        build_warehouse(tmp_path, _landing(tmp_path), _config(rates))
    return str(refused.value)


def test_two_currencies_without_a_rate_table_are_refused_by_file_row_and_currency(tmp_path):
    message = _refusal(tmp_path, None)
    for row, day in ((2, "2026-10-14"), (4, "2026-10-15")):
        assert (
            f"{CUR_FILE} row {row} (account {ACCOUNT} in EUR, its other lines in USD: no "
            f"exchange rate from EUR to USD on {day}; add `exchange_rates` to kubeledger.yml)"
        ) in message
    assert f"{CUR_FILE} row 1 " not in message and f"{CUR_FILE} row 3 " not in message


def test_a_rate_table_starting_later_leaves_the_earlier_line_refused(tmp_path):
    message = _refusal(tmp_path, RATES[1:])
    assert f"{CUR_FILE} row 2 (account {ACCOUNT} in EUR" in message
    assert "on 2026-10-14; add `exchange_rates`" in message
    assert f"{CUR_FILE} row 4 " not in message


def test_billing_lines_are_converted_by_the_rate_of_their_charge_date(warehouse):
    rows = query(
        warehouse,
        """select source_row_number, currency, source_currency, exchange_rate,
               list_cost, billed_cost, effective_cost,
               source_list_cost, source_billed_cost, source_effective_cost
           from marts.fct_billing_lines order by source_row_number""",
    )
    usd, eur = Decimal("4.8000000000"), Decimal("2.3456789012")
    oct14, oct15 = Decimal("2.5333332133"), Decimal("2.6353702455")
    assert rows == [
        (1, "USD", "USD", None, usd, usd, usd, usd, usd, usd),
        (2, "USD", "EUR", Decimal("1.08"), oct14, oct14, oct14, eur, eur, eur),
        (3, "USD", "USD", None, usd, usd, usd, usd, usd, usd),
        (4, "USD", "EUR", Decimal("1.1235"), oct15, oct15, oct15, eur, eur, eur),
    ]


def test_node_day_costs_are_in_the_billing_currency(warehouse):
    rows = query(
        warehouse,
        """select cast(usage_date as varchar), node, node_cost
           from marts.fct_node_costs_daily order by 1, 2""",
    )
    expected = [
        ("2026-10-14", "ip-a", 4.80),
        ("2026-10-14", "ip-b", 2.5333332133),
        ("2026-10-15", "ip-a", 4.80),
        ("2026-10-15", "ip-b", 2.6353702455),
    ]
    assert [(day, node) for day, node, _ in rows] == [(day, node) for day, node, _ in expected]
    for (_, _, cost), (_, _, hand) in zip(rows, expected, strict=True):
        assert float(cost) == pytest.approx(hand, abs=1e-9)


def test_cluster_day_scope_is_in_the_billing_currency(warehouse):
    scoped = query(
        warehouse,
        """select cast(charge_date as varchar), sum(effective_cost)
           from intermediate.int_billing_lines_scoped group by 1 order by 1""",
    )
    assert scoped == [
        ("2026-10-14", Decimal("7.3333332133")),
        ("2026-10-15", Decimal("7.4353702455")),
    ]
    clusters = query(
        warehouse,
        """select cast(usage_date as varchar), billed_cost_in_scope, ledger_cost
           from marts.fct_cluster_costs_daily order by 1""",
    )
    for (day, billed, ledger), (hand_day, hand) in zip(
        clusters, [("2026-10-14", 7.3333332133), ("2026-10-15", 7.4353702455)], strict=True
    ):
        assert day == hand_day
        assert float(billed) == pytest.approx(hand, abs=1e-9)
        assert float(ledger) == pytest.approx(hand, abs=1e-9)
