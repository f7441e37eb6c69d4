"""Honest headline figures (issue 16 §2): how the month's bill is backed, invoice / rate card /
estimate, in money and share, beside reconciled-to-invoice (which counts rate-card clusters
as reconciled, SPEC §8).

A hand-built warehouse of three clusters, one backing each:
- `example` (AWS, linked): SPEC §8's worked example (tests/test_worked_example.py), 2026-10-05:
  the $800.00 m5.xlarge node and the $100.00 orphan volume in scope, invoiced: $900.00;
- `onprem` (on_prem, rate card): one node priced 2.50 an hour by name, 24 hours on 2026-10-05:
  2.50 × 24 = $60.00;
- `guess` (AWS, no billing link): one m5.xlarge node in us-east-1 (its labels say so) for 24
  hours on 2026-10-06; no bill prices it, so the ledger estimates it at its peers' hourly rate
  over the days before (the example node's 800.00 / 24 h) × 24 h = $800.00, and with no
  link its slice is billed at that estimate.
The bill: 900.00 + 60.00 + 800.00 = $1,760.00; invoice 900 / 1760 = 51.136…% (51.14),
rate card 60 / 1760 = 3.409…% (3.41), estimate 800 / 1760 = 45.454…% (45.45). So reconciled to
invoice is below 100% only by the estimated node, while half of the bill has an invoice
behind it; the report's first screen and the console say "Partly estimated".
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import uuid
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from kubeledger.bill_backing import BillBacking, console_lines, load_bill_backing
from tests.test_worked_example import ACCOUNT, CLUSTER, GIB, POD_COLUMNS, PODS, _landing
from tests.warehouse_builder import build_warehouse, query

MONTH = "2026-10"
MONTH_START = dt.date(2026, 10, 1)  # how a mart names the month (a date)
TOTAL = Decimal("1760.00")


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _usage(landing: Path, cluster: str, day: str, node: str, node_labels: str | None) -> None:
    """A day of the worked example's four pods (4 cores, 16 GiB: the node full) on `node`."""
    folder = landing / "usage" / cluster / day
    files = ["pods.csv"] + (["node_labels.csv"] if node_labels else [])
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{cluster}/{day}")),
                "cluster_id": cluster,
                "version": "3.3.0",
                "date": f"{day}T23:59:00Z",
                "files": files,
            }
        )
    )
    pods, labels = [], []
    for hour in range(24):
        interval = {
            "report_period_start": "2026-10-01 00:00:00 +0000 UTC",
            "report_period_end": "2026-11-01 00:00:00 +0000 UTC",
            "interval_start": f"{day} {hour:02d}:00:00 +0000 UTC",
            "interval_end": f"{day} {hour:02d}:59:59 +0000 UTC",
        }
        for namespace, pod, cores, gib, pod_labels in PODS:
            pods.append(
                {
                    **interval,
                    "node": node,
                    "namespace": namespace,
                    "pod": pod,
                    "pod_usage_cpu_core_seconds": cores * 3600,
                    "pod_request_cpu_core_seconds": cores * 3600,
                    "pod_limit_cpu_core_seconds": cores * 3600,
                    "pod_usage_memory_byte_seconds": gib * GIB * 3600,
                    "pod_request_memory_byte_seconds": gib * GIB * 3600,
                    "pod_limit_memory_byte_seconds": gib * GIB * 3600,
                    "node_capacity_cpu_cores": 4,
                    "node_capacity_cpu_core_seconds": 4 * 3600,
                    "node_capacity_memory_bytes": 16 * GIB,
                    "node_capacity_memory_byte_seconds": 16 * GIB * 3600,
                    "node_role": "worker",
                    "resource_id": "",
                    "pod_labels": pod_labels,
                }
            )
        if node_labels:
            labels.append({**interval, "node": node, "node_labels": node_labels})
    _write_csv(folder / "pods.csv", POD_COLUMNS, pods)
    if node_labels:
        _write_csv(folder / "node_labels.csv", [*list(labels[0])], labels)


def _fleet(root: Path) -> Path:
    landing = _landing(root)  # the example cluster, invoiced
    _usage(landing, "onprem", "2026-10-05", "dc-node-1", None)
    _write_csv(
        landing / "rate_card" / "onprem.csv",
        ["cluster_id", "resource", "selector_type", "selector", "price", "unit", "currency"]
        + ["effective_from"],
        [
            {
                "cluster_id": "onprem",
                "resource": "node",
                "selector_type": "node",
                "selector": "dc-node-1",
                "price": "2.50",
                "unit": "hour",
                "currency": "USD",
                "effective_from": "2026-10-01",
            }
        ],
    )
    _usage(
        landing,
        "guess",
        "2026-10-06",
        "ip-10-9-0-1",
        "label_node_kubernetes_io_instance_type:m5.xlarge"
        "|label_topology_kubernetes_io_region:us-east-1",
    )
    return landing


CONFIG = {
    "clusters": [
        {
            "id": CLUSTER,
            "provider": "aws",
            "billing_link": {"accounts": [ACCOUNT], "tags": [f"kubernetes.io/cluster/{CLUSTER}"]},
        },
        {"id": "onprem", "provider": "on_prem"},
        {"id": "guess", "provider": "aws"},
    ],
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bill_backing")
    return build_warehouse(root, _fleet(root), CONFIG)


def test_the_ledger_prices_each_cluster_as_planned(warehouse):
    """The premise of the figures below: each cluster's month as the docstring computes it."""
    rows = query(
        warehouse,
        """select cluster_id, pricing_basis, round(sum(node_cost), 6)
           from marts.fct_node_costs_daily group by 1, 2 order by 1""",
    )
    assert rows == [
        ("example", "bill", 800.0),
        ("guess", "estimate", 800.0),
        ("onprem", "rate_card", 60.0),
    ]


def test_the_backing_view_splits_the_bill_to_the_cent(warehouse):
    rows = query(
        warehouse,
        """select backing, bill_state, slice_count > 0, billed_cost, bill_total_cost,
                  bill_share_pct
           from marts.rpt_metrics_bill_backing_monthly where bill_month = ?
           order by backing_order""",
        [MONTH_START],
    )
    assert rows == [
        ("invoice", "draft", True, Decimal("900.00"), TOTAL, 51.14),
        ("rate_card", "draft", True, Decimal("60.00"), TOTAL, 3.41),
        ("estimate", "draft", True, Decimal("800.00"), TOTAL, 45.45),
        ("invoice_and_estimate", "draft", False, Decimal("0.00"), TOTAL, 0.0),
    ]
    # the four add up to the bill lines exactly
    [(lines,)] = query(
        warehouse,
        "select sum(billed_cost) from marts.fct_bill_lines_monthly where bill_month = ?",
        [MONTH_START],
    )
    assert lines == TOTAL
    # the slices named: only the clusters whose money is in each
    named = dict(
        query(
            warehouse,
            "select backing, slices from marts.rpt_metrics_bill_backing_monthly "
            "where bill_month = ? and billed_cost <> 0",
            [MONTH_START],
        )
    )
    assert {
        backing: {s.split(" ")[0] for s in text.split(", ")} for backing, text in named.items()
    } == {
        "invoice": {"example"},
        "rate_card": {"onprem"},
        "estimate": {"guess"},
    }


def test_reconciled_to_invoice_reads_higher_than_the_invoice_share(warehouse):
    """Why the split is needed: the rate card counts as reconciled, the invoice backs 51%."""
    [(reconciled,)] = query(
        warehouse,
        """select sum(reconciled_cost) / sum(cost_in_scope)
           from marts.fct_reconciliation_daily
           where usage_date between '2026-10-01' and '2026-10-31'""",
    )
    assert reconciled == pytest.approx(960 / 1760, abs=1e-9)  # invoice + rate card


def _backing(db: Path) -> BillBacking:
    with duckdb.connect(str(db), read_only=True) as con:
        found = load_bill_backing(con, MONTH)
    assert found is not None
    return found


def test_the_console_says_partly_estimated_in_words(warehouse):
    lines = console_lines(_backing(warehouse), lambda amount: f"{amount:,.2f} USD")
    assert lines == [
        "This bill of 1,760.00 USD is backed by: invoice 900.00 USD (51.1%); "
        "rate card 60.00 USD (3.4%); estimate 800.00 USD (45.5%).",
        "Partly estimated: 800.00 USD (45.5%) of it is the ledger's own estimate, with no "
        "invoice or rate card behind it (guess compute).",
        "Reconciled to invoice counts rate-card clusters as reconciled: their 60.00 USD is "
        "priced from the rate card, not invoiced.",
    ]


def test_the_report_shows_the_backing_on_its_first_screen(warehouse):
    from kubeledger.report.data import load_report_data
    from kubeledger.report.render import render_report

    with duckdb.connect(str(warehouse), read_only=True) as con:
        data = load_report_data(con, MONTH)
    page = render_report(data, generated_at=dt.datetime(2026, 11, 20, 9, 0))
    words = re.search(r'<p class="backing estimated" id="bill-backing"[^>]*>(.*?)</p>', page)
    assert words, "no backing sentence before the tiles"
    assert page.index('id="bill-backing"') < page.index('class="tiles"')
    assert 'data-partly-estimated="true"' in page
    text = words.group(1)
    assert "invoice $900.00 (51.1%); rate card $60.00 (3.4%); estimate $800.00 (45.5%)" in text
    assert "Partly estimated: $800.00 (45.5%)" in text
    tile = re.search(
        r'<div class="tile warn"><div class="tile-label">Bill backed by invoice</div>'
        r'<div class="tile-value">([^<]*)</div><div class="tile-note">([^<]*)</div>',
        page,
    )
    assert tile, "no backing tile"
    assert tile.group(1) == "51.1%"
    assert (
        tile.group(2)
        == "invoice $900.00 (51.1%) · rate card $60.00 (3.4%) · estimate $800.00 (45.5%)"
    )


def test_a_sealed_month_shows_the_sealed_backing(warehouse, tmp_path):
    """`make demo`'s close step (as of past the deadline: the estimated cluster falls back to
    its estimate, SPEC §9) prints the backing under the bill, and the view then reads the
    sealed store: the same money."""
    from kubeledger.close.demo import print_demo_close

    db = tmp_path / "closed.duckdb"
    db.write_bytes(warehouse.read_bytes())
    printed: list[str] = []
    print_demo_close(db, month=MONTH, as_of="2026-11-20", echo=printed.append)
    assert any(line.strip().startswith("sealed as bill-2026-10-") for line in printed), printed
    assert printed[-3:] == [
        "    This bill of $1,760.00 is backed by: invoice $900.00 (51.1%); "
        "rate card $60.00 (3.4%); estimate $800.00 (45.5%).",
        "    Partly estimated: $800.00 (45.5%) of it is the ledger's own estimate, with no "
        "invoice or rate card behind it (guess compute).",
        "    Reconciled to invoice counts rate-card clusters as reconciled: their $60.00 is "
        "priced from the rate card, not invoiced.",
    ]
    backing = _backing(db)
    assert backing.state == "sealed"
    assert backing.total == TOTAL
    assert backing.amounts == {
        "invoice": Decimal("900.00"),
        "rate_card": Decimal("60.00"),
        "estimate": Decimal("800.00"),
        "invoice_and_estimate": Decimal("0.00"),
    }


def test_a_bill_an_invoice_backs_wholly_says_so():
    """No estimate and no rate card: no warning, and no rate-card sentence."""
    backing = BillBacking(
        MONTH,
        "sealed",
        "USD",
        Decimal("10.00"),
        {
            "invoice": Decimal("10.00"),
            "rate_card": Decimal("0"),
            "estimate": Decimal("0"),
            "invoice_and_estimate": Decimal("0"),
        },
        {"invoice": ["a compute"], "rate_card": [], "estimate": [], "invoice_and_estimate": []},
    )
    assert not backing.partly_estimated
    assert console_lines(backing, lambda amount: f"${amount:,.2f}") == [
        "This bill of $10.00 is backed by: invoice $10.00 (100.0%); rate card $0.00 (0.0%); "
        "estimate $0.00 (0.0%).",
        "Nothing on it is an estimate.",
    ]


def test_days_not_billed_yet_count_as_partly_estimated():
    """An `invoice_and_estimate` slice (invoice on complete days, estimate on the rest) is
    shown as its own part and makes the bill partly estimated."""
    backing = BillBacking(
        MONTH,
        "draft",
        "USD",
        Decimal("40.00"),
        {
            "invoice": Decimal("30.00"),
            "rate_card": Decimal("0"),
            "estimate": Decimal("0"),
            "invoice_and_estimate": Decimal("10.00"),
        },
        {"invoice": ["a compute"], "invoice_and_estimate": ["b compute"], "estimate": []},
    )
    lines = console_lines(backing, lambda amount: f"${amount:,.2f}")
    assert lines[0].endswith("estimate $0.00 (0.0%); invoice + estimate $10.00 (25.0%).")
    assert lines[1] == (
        "Partly estimated: $10.00 (25.0%) of it is the ledger's own estimate, with no invoice "
        "or rate card behind it (b compute)."
    )
