"""Platform is decided per pod-hour (SPEC §5), end to end on one on-prem day.

Nodes (4 cores, 16 GiB): the infra node `infra1` at $2.00/h and the worker `w1` at $1.00/h,
both up all day: $48 + $24 = $72. Every pod uses exactly what it requests (no workload idle).
- `mover-0` (team movers) runs hours 0–5 on infra1 and 6–23 on w1 with 1 core and 4 GiB
  (a quarter of either node): 6 × 0.25 × $2 = $3.00 of platform on infra1, then
  18 × 0.25 × $1 = $4.50 of direct cost on w1;
- `coredns-0` (kube-system) on infra1 all day with 0.5 core and 2 GiB: 24 × $0.25 = $6.00;
- `steady-0` (team steady) on w1 all day with 2 cores and 8 GiB: 24 × $0.50 = $12.00.
Cluster-day: direct 4.50 + 12.00 = 16.50; platform = all of infra1 = 48.00; infrastructure
idle = w1's unclaimed 24 − 4.50 − 12.00 = 7.50; workload idle 0; total 72. Booking mover-0's
whole day as platform (the bug) would give platform 52.50 and direct 12.00.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hourly_landing import write_nodes, write_pod_usage
from tests.warehouse_builder import build_warehouse, query

DAY = "2026-10-05"
CLUSTER = "dc1"
CONFIG = {
    "clusters": [{"id": CLUSTER, "provider": "on_prem"}],
    "node_prices": [
        {"cluster": CLUSTER, "node": "infra1", "hourly_price": 2.0},
        {"cluster": CLUSTER, "node": "w1", "hourly_price": 1.0},
    ],
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("platform_hours")
    landing = root / "landing"
    pod_hours = []
    for hour in range(24):
        if hour < 6:
            pod_hours.append(
                (hour, "infra1", "infra", "shop", "mover-0", 1, 4, "label_team:movers")
            )
        else:
            pod_hours.append((hour, "w1", "worker", "shop", "mover-0", 1, 4, "label_team:movers"))
        pod_hours.append((hour, "infra1", "infra", "kube-system", "coredns-0", 0.5, 2, ""))
        pod_hours.append((hour, "w1", "worker", "shop", "steady-0", 2, 8, "label_team:steady"))
    write_pod_usage(landing, CLUSTER, DAY, pod_hours)
    write_nodes(landing, CLUSTER, DAY, ["infra1", "w1"])
    return build_warehouse(root, landing, CONFIG)


def test_cluster_day_categories(warehouse):
    [(direct, idle, platform, infra_idle, ledger)] = query(
        warehouse,
        """select direct_cost, workload_idle_cost, platform_cost, infrastructure_idle_cost,
                  ledger_cost
           from marts.fct_cluster_costs_daily where cluster_id = ? and usage_date = ?""",
        [CLUSTER, DAY],
    )
    assert direct == pytest.approx(16.5, abs=1e-6)
    assert idle == pytest.approx(0, abs=1e-6)
    assert platform == pytest.approx(48.0, abs=1e-6)
    assert infra_idle == pytest.approx(7.5, abs=1e-6)
    assert ledger == pytest.approx(72.0, abs=1e-6)


def test_a_pod_partly_on_an_infra_node_has_a_platform_row_and_a_user_row(warehouse):
    rows = query(
        warehouse,
        """select pod, is_platform, node, pod_hours, round(total_cost, 9), round(used_cost, 9),
                  team
           from marts.fct_pod_costs_daily order by pod, is_platform""",
    )
    assert rows == [
        ("coredns-0", True, "infra1", 6.0 * 4, 6.0, 6.0, "unallocated"),
        ("mover-0", False, "w1", 18.0, 4.5, 4.5, "movers"),
        ("mover-0", True, "infra1", 6.0, 3.0, 3.0, "movers"),
        ("steady-0", False, "w1", 24.0, 12.0, 12.0, "steady"),
    ]


def test_owners_get_only_their_user_hours(warehouse):
    rows = query(
        warehouse,
        """select team, round(sum(direct_cost), 9), round(sum(total_cost), 9)
           from marts.fct_owner_costs_daily group by team order by team""",
    )
    # platform keeps the platform pool (infra1's $48) and, by default, w1's idle ($7.50)
    assert rows == [("movers", 4.5, 4.5), ("platform", 0.0, 55.5), ("steady", 12.0, 12.0)]
