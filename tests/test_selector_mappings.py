"""Selector mappings on aliased keys, end to end from kubeledger.yml to the pod mart (SPEC §6).

One on-prem day. Selector keys are normalized exactly as pod label keys are, aliases and DNS
prefixes included, with Kubernetes selector semantics:
1 `app.kubernetes.io/name in (cart)` → payments: `name` is an alias of `app`, and cart-0's
  label comes sanitized by the operator (`label_app_kubernetes_io_name`), so it reads `app`;
2 `squad in (blue)` → blue-team: `squad` is a configured alias of `team`, on both sides;
3 `example.com/tier = gold` → gold: `example.com` is a configured DNS prefix;
4 `name notin (x)` → not-x: web-0 carries `app=x` and must not match (it keeps no team);
  plain-0 has no such key, which `notin` matches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hourly_landing import write_nodes, write_pod_usage
from tests.warehouse_builder import build_warehouse, query

DAY = "2026-10-05"
CLUSTER = "dc1"
PODS = [
    ("cart-0", "label_app_kubernetes_io_name:cart"),
    ("web-0", "label_app:x"),
    ("blue-0", "label_squad:blue"),
    ("gold-0", "label_example_com_tier:gold"),
    ("plain-0", ""),
]
CONFIG = {
    "clusters": [{"id": CLUSTER, "provider": "on_prem"}],
    "node_prices": [{"cluster": CLUSTER, "node": "n1", "hourly_price": 1.0}],
    "labels": {"aliases": {"squad": "team"}, "dns_prefixes": ["example.com"]},
    "ownership": {
        "selector_mappings": [
            {"selector": "app.kubernetes.io/name in (cart)", "team": "payments"},
            {"selector": "squad in (blue)", "team": "blue-team"},
            {"selector": "example.com/tier = gold", "team": "gold"},
            {"selector": "name notin (x)", "team": "not-x"},
        ]
    },
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("selector_mappings")
    landing = root / "landing"
    write_pod_usage(
        landing,
        CLUSTER,
        DAY,
        [
            (hour, "n1", "worker", "shop", pod, 0.5, 2, labels)
            for hour in range(24)
            for pod, labels in PODS
        ],
    )
    write_nodes(landing, CLUSTER, DAY, ["n1"])
    return build_warehouse(root, landing, CONFIG)


def test_selector_keys_are_normalized_like_pod_label_keys(warehouse):
    rows = query(
        warehouse,
        "select pod, team, team_source from marts.fct_pod_costs_daily order by pod",
    )
    assert rows == [
        ("blue-0", "blue-team", "selector_mapping"),
        ("cart-0", "payments", "selector_mapping"),
        ("gold-0", "gold", "selector_mapping"),
        ("plain-0", "not-x", "selector_mapping"),
        ("web-0", "unallocated", "none"),
    ]


def test_each_pod_costs_its_claim(warehouse):
    # 0.5 of 4 cores and 2 of 16 GiB of a $1.00 node-hour: $0.125 an hour, $3.00 a day
    rows = query(
        warehouse,
        "select pod, round(total_cost, 9) from marts.fct_pod_costs_daily order by pod",
    )
    assert rows == [(pod, 3.0) for pod, _ in sorted(PODS)]
