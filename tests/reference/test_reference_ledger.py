"""Hand-computed cases for the reference ledger itself (SPEC §5–§9)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.reference import build_ledger
from tests.reference.close import UNASSIGNED, close_month, round_lines
from tests.reference.distribution import distribute
from tests.reference.labels import KeyRule, looks_generated, parse_labels, parse_selector
from tests.reference.labels import selector_matches as matches
from tests.reference.ownership import workloads
from tests.reference.settings import Settings
from tests.reference.usage import Usage

DAY = dt.date(2026, 10, 5)
GIB = 1024**3


def hour(n: int) -> pd.Timestamp:
    return pd.Timestamp(DAY, tz="UTC") + pd.Timedelta(hours=n)


def pod_row(
    node,
    namespace,
    pod,
    h,
    cpu_use,
    cpu_req,
    mem_use,
    mem_req,
    *,
    cores=4,
    mem=8,
    ran=1.0,
    role="worker",
    labels="",
):
    """Usage in core-hours / GiB-hours for one hour; the node ran `ran` of the hour."""
    return {
        "cluster_id": "c1",
        "node": node,
        "hour": hour(h),
        "usage_date": DAY,
        "namespace": namespace,
        "pod": pod,
        "pod_usage_cpu_core_seconds": cpu_use * 3600.0,
        "pod_request_cpu_core_seconds": cpu_req * 3600.0,
        "pod_usage_memory_byte_seconds": mem_use * GIB * 3600.0,
        "pod_request_memory_byte_seconds": mem_req * GIB * 3600.0,
        "node_capacity_cpu_cores": float(cores),
        "node_capacity_cpu_core_seconds": cores * 3600.0 * ran,
        "node_capacity_memory_bytes": mem * GIB,
        "node_capacity_memory_byte_seconds": mem * GIB * 3600.0 * ran,
        "node_role": role,
        "resource_id": node,
        "pod_labels": labels,
    }


def usage(rows, owners=(), namespace_labels=()) -> Usage:
    return Usage(
        pods=pd.DataFrame(rows),
        storage=pd.DataFrame(
            columns=[
                "cluster_id",
                "hour",
                "usage_date",
                "namespace",
                "pod",
                "node",
                "persistentvolumeclaim",
                "persistentvolume",
                "csi_volume_handle",
            ]
        ).astype({"hour": "datetime64[ns, UTC]"}),
        node_labels=pd.DataFrame(columns=["cluster_id", "node", "hour", "node_labels"]).astype(
            {"hour": "datetime64[ns, UTC]"}
        ),
        namespace_labels=pd.DataFrame(
            list(namespace_labels), columns=["cluster_id", "namespace", "hour", "namespace_labels"]
        ).astype({"hour": "datetime64[ns, UTC]"}),
        owners=pd.DataFrame(
            list(owners),
            columns=["cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name"],
        ),
        lb_services=pd.DataFrame(
            columns=["cluster_id", "namespace", "service", "load_balancer_id"]
        ),
    )


def pricing(node_costs: dict[str, float], *, scope=None, volumes=None, unallocated=None):
    empty = pd.DataFrame
    node_days = pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "node": n,
                "usage_date": DAY,
                "pricing_basis": "bill",
                "hours_run": 1.0,
                "node_cost": c,
            }
            for n, c in node_costs.items()
        ]
    )
    total = sum(node_costs.values())
    return SimpleNamespace(
        node_days=node_days,
        volume_days=volumes
        if volumes is not None
        else empty(columns=["cluster_id", "usage_date", "pv_name", "resource_id", "volume_cost"]),
        lb_days=empty(
            columns=[
                "cluster_id",
                "usage_date",
                "namespace",
                "service",
                "resource_id",
                "load_balancer_cost",
            ]
        ),
        platform_fees=empty(
            columns=["cluster_id", "usage_date", "cost_family", "resource_id", "cost"]
        ),
        unallocated=unallocated
        if unallocated is not None
        else empty(
            columns=["cluster_id", "usage_date", "cost_family", "resource_id", "reason", "cost"]
        ),
        network_pool=empty(columns=["cluster_id", "usage_date", "cost"]),
        scope=scope
        if scope is not None
        else pd.DataFrame(
            [
                {
                    "cluster_id": "c1",
                    "usage_date": DAY,
                    "cost_family": "compute",
                    "in_scope_cost": total,
                }
            ]
        ),
        day_status=pd.DataFrame(
            [
                {
                    "cluster_id": "c1",
                    "usage_date": DAY,
                    "has_usage": True,
                    "has_billing": True,
                    "estimated_nodes": 0,
                }
            ]
        ),
        billing_link=pd.DataFrame({"cluster_id": ["c1"], "has_billing_link": [True]}),
    )


CONFIG = {"clusters": [{"id": "c1", "provider": "aws", "billing_link": {"tags": ["x"]}}]}


def pod(ledger, name):
    frame = ledger.pod_days
    return frame[frame["pod"] == name].iloc[0]


def test_cpu_overcommit_scales_claims():
    # node-hour $10: CPU part $5, memory part $5. CPU claims: a max(3,1)/4 = .75,
    # b max(1,3)/4 = .75, sum 1.5 -> s = 2/3, each claim .5: cost 2.50 each.
    # used: a 5 × min(1/4, .5) = 1.25; b 5 × min(3/4, .5) = 2.50.
    # memory claims 2/8 each (no over-commit): cost 1.25, used 5 × 1/8 = .625 each.
    rows = [
        pod_row("n1", "shop", "a", 0, 1, 3, 1, 2),
        pod_row("n1", "shop", "b", 0, 3, 1, 1, 2),
    ]
    ledger = build_ledger(usage(rows), pricing({"n1": 10.0}), CONFIG, as_of=dt.date(2026, 11, 19))
    a, b = pod(ledger, "a"), pod(ledger, "b")
    assert a.cpu_cost == pytest.approx(2.5) and b.cpu_cost == pytest.approx(2.5)
    assert a.used_cost == pytest.approx(1.25 + 0.625)
    assert b.used_cost == pytest.approx(2.5 + 0.625)
    assert a.workload_idle_cost == pytest.approx(1.25 + 0.625)
    assert b.workload_idle_cost == pytest.approx(0.625)
    day = ledger.cluster_days.iloc[0]
    assert day.infrastructure_idle_cost == pytest.approx(10 - 2 * (2.5 + 1.25))
    assert day.direct_cost == pytest.approx(1.875 + 3.125)
    assert day.overcommitted_node_hours == 1


def test_memory_overcommit_scales_claims_independently_of_cpu():
    # memory claims: a max(6,2)/8 = .75, b max(2,6)/8 = .75 -> s = 2/3, .5 each: $2.50 each;
    # used a 5 × min(2/8, .5) = 1.25, b 5 × min(6/8, .5) = 2.5. CPU claims 1/4 each, no scale.
    rows = [
        pod_row("n1", "shop", "a", 0, 0.5, 1, 2, 6),
        pod_row("n1", "shop", "b", 0, 0.5, 1, 6, 2),
    ]
    ledger = build_ledger(usage(rows), pricing({"n1": 10.0}), CONFIG, as_of=dt.date(2026, 11, 19))
    a, b = pod(ledger, "a"), pod(ledger, "b")
    assert a.memory_cost == pytest.approx(2.5) and b.memory_cost == pytest.approx(2.5)
    assert a.cpu_cost == pytest.approx(1.25)
    assert a.used_cost == pytest.approx(1.25 + 5 * 0.5 / 4)
    assert b.used_cost == pytest.approx(2.5 + 5 * 0.5 / 4)
    assert ledger.cluster_days.iloc[0].infrastructure_idle_cost == pytest.approx(10 - 2 * 3.75)


def test_node_hour_cost_follows_the_fraction_of_the_hour_it_ran():
    # hour 0 full, hour 1 half: $12 splits $8 / $4. Pod claims half CPU and memory both hours.
    rows = [
        pod_row("n1", "shop", "a", 0, 2, 2, 4, 4),
        pod_row("n1", "shop", "a", 1, 1, 1, 2, 2, ran=0.5),
    ]
    ledger = build_ledger(usage(rows), pricing({"n1": 12.0}), CONFIG, as_of=dt.date(2026, 11, 19))
    # hour 1: claim = 1 core-hour / (4 × 0.5) = .5 -> half of $4
    assert pod(ledger, "a").total_cost == pytest.approx(8 * 0.5 + 4 * 0.5)


def test_platform_is_decided_per_pod_hour_and_infra_nodes_are_fully_platform():
    # infra node i1 ($4 / hour 0) and worker w1 ($8 / hour 1). Pod m runs hour 0 on i1, hour 1
    # on w1, claiming a quarter of CPU and memory: $1 on i1 (platform) and $2 on w1 (direct
    # 1 used: usage = request). i1's unclaimed $3 is platform, not idle; w1's $6 is idle.
    rows = [
        pod_row("i1", "shop", "m", 0, 1, 1, 2, 2, role="infra"),
        pod_row("w1", "shop", "m", 1, 1, 1, 2, 2),
    ]
    node_days = pricing({"i1": 4.0, "w1": 8.0})
    ledger = build_ledger(usage(rows), node_days, CONFIG, as_of=dt.date(2026, 11, 19))
    day = ledger.cluster_days.iloc[0]
    assert day.platform_cost == pytest.approx(4.0)
    assert day.direct_cost == pytest.approx(2.0)
    assert day.infrastructure_idle_cost == pytest.approx(6.0)
    assert day.workload_idle_cost == pytest.approx(0.0)
    assert not pod(ledger, "m").is_platform  # platform one hour of two


def test_platform_namespace_pods_are_platform():
    rows = [
        pod_row("n1", "kube-system", "dns", 0, 1, 2, 2, 2),
        pod_row("n1", "openshift-monitoring", "prom", 0, 1, 1, 2, 2),
        pod_row("n1", "shop", "a", 0, 1, 1, 2, 2),
    ]
    ledger = build_ledger(usage(rows), pricing({"n1": 8.0}), CONFIG, as_of=dt.date(2026, 11, 19))
    day = ledger.cluster_days.iloc[0]
    # dns: cpu 4 × 2/4 = 2, memory 4 × 2/8 = 1 -> 3; prom: 1 + 1 = 2; a: 2 direct
    assert day.platform_cost == pytest.approx(5.0)
    assert day.direct_cost == pytest.approx(2.0)
    assert day.infrastructure_idle_cost == pytest.approx(1.0)
    assert pod(ledger, "dns").is_platform and not pod(ledger, "a").is_platform


RULE = KeyRule.from_config(
    {"labels": {"aliases": {"squad": "team"}, "dns_prefixes": ["example.com"]}}
)


def test_label_keys_normalize_sanitized_and_plain_forms():
    labels = parse_labels(
        "label_app_kubernetes_io_name:web|label_app_kubernetes_io_part_of:shop|"
        "label_example_com_cost_center:cc-1|label_squad:blue|label_Tier:front",
        RULE,
    )
    assert labels == {
        "app": "web",
        "application": "shop",
        "cost_center": "cc-1",
        "team": "blue",
        "tier": "front",
    }
    assert RULE.normalize("app.kubernetes.io/name")[0] == "app"
    assert RULE.normalize("kubernetes.io/team")[0] == "team"
    assert RULE.normalize("cost-center")[0] == "cost_center"


def test_label_conflict_the_unrewritten_key_wins_then_the_first_raw_key():
    assert parse_labels("label_app_kubernetes_io_name:y|label_app:x", RULE) == {"app": "x"}
    # both rewritten: alphabetically first raw key
    assert parse_labels("label_name:b|label_app_kubernetes_io_name:a", RULE) == {"app": "a"}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app in (cart, checkout)", {"app": "cart"}, True),
        ("app in (cart, checkout)", {"app": "web"}, False),
        ("app notin (cart)", {}, True),  # notin matches a pod without the key
        ("app notin (cart)", {"app": "cart"}, False),
        ("app != cart", {}, True),  # != too
        ("app!=cart", {"app": "web"}, True),
        ("app=cart", {"app": "cart"}, True),
        ("app==cart", {"app": "web"}, False),
        ("tier", {"tier": "x"}, True),  # exists
        ("tier", {}, False),
        ("!tier", {}, True),
        ("!tier", {"tier": "x"}, False),
        ("app=cart,tier", {"app": "cart"}, False),  # every requirement
        ("squad in (blue)", {"team": "blue"}, True),  # selector keys use the aliases
        ("app.kubernetes.io/name=web", {"app": "web"}, True),
    ],
)
def test_selector_semantics(selector, labels, expected):
    assert matches(parse_selector(selector, RULE), labels) is expected


def test_generated_values_are_never_owners():
    assert looks_generated("8f3a9c2b1d")
    assert looks_generated("123e4567-e89b-12d3-a456-426614174000")
    assert looks_generated("cart-7d9f8b6c5d")
    assert looks_generated("team1234567")
    assert not looks_generated("payments") and not looks_generated("cc-1001")


def _owner_config(**ownership):
    return {
        **CONFIG,
        "labels": {"aliases": {"squad": "team"}},
        "ownership": ownership,
        "clusters": [
            {
                "id": "c1",
                "provider": "aws",
                "billing_link": {"tags": ["x"]},
                "defaults": {"cost_center": "cc-default"},
            }
        ],
    }


def test_ownership_rules_in_order():
    rows = [
        pod_row("n1", "shop", "a", 0, 1, 1, 1, 1, labels="label_app:cart|label_team:lbl"),
        pod_row("n1", "shop", "b", 0, 1, 1, 1, 1, labels="label_squad:blue"),
        pod_row("n1", "shop", "c", 0, 1, 1, 1, 1, labels="label_team:8f3a9c2b1d"),
        pod_row("n1", "misc", "d", 0, 1, 1, 1, 1, labels=""),
    ]
    config = _owner_config(
        selector_mappings=[
            {"selector": "app in (cart)", "team": "payments"},
            {
                "selector": "app notin (cart)",
                "application": "other",
                "effective_from": "2026-10-06",
            },
        ],
        namespace_mappings=[{"namespace": "shop", "team": "shop-team", "cost_center": "cc-shop"}],
    )
    ns = [
        {
            "cluster_id": "c1",
            "namespace": "misc",
            "hour": hour(0),
            "namespace_labels": "label_team:misc-team",
        }
    ]
    ledger = build_ledger(
        usage(rows, namespace_labels=ns), pricing({"n1": 8.0}), config, as_of=dt.date(2026, 11, 19)
    )
    a, b, c, d = (pod(ledger, p) for p in "abcd")
    assert (a.team, a.team_source) == ("payments", "selector_mapping")
    assert (b.team, b.team_source) == (
        "blue",
        "workload_label",
    )  # labels win over the namespace map
    assert (c.team, c.team_source) == ("shop-team", "namespace_mapping")  # generated value
    assert (b.cost_center, b.cost_center_source) == ("cc-shop", "namespace_mapping")
    assert (d.team, d.team_source) == ("misc-team", "namespace_label")
    assert (d.cost_center, d.cost_center_source) == ("cc-default", "cluster_default")
    # the notin mapping starts 2026-10-06: not yet on 2026-10-05
    assert (d.application, d.application_source) == ("unallocated", "none")


def test_workloads_from_owner_references():
    pods = pd.DataFrame(
        [
            {"cluster_id": "c1", "namespace": "ns", "pod": p}
            for p in [
                "web-5d8f7b9c4d-x2x9q",
                "report-123-abcde",
                "etcd-n1",
                "db-0",
                "api-7c9d8f6b5-zt4vq",
                "debug-shell",
            ]
        ]
    )
    owners = pd.DataFrame(
        [
            ("c1", "ns", "Pod", "web-5d8f7b9c4d-x2x9q", "ReplicaSet", "web-5d8f7b9c4d"),
            ("c1", "ns", "ReplicaSet", "web-5d8f7b9c4d", "Deployment", "web"),
            ("c1", "ns", "Pod", "report-123-abcde", "Job", "report-123"),
            ("c1", "ns", "Job", "report-123", "CronJob", "report"),
            ("c1", "ns", "Pod", "etcd-n1", "Node", "n1"),
            ("c1", "ns", "Pod", "db-0", "StatefulSet", "db"),
        ],
        columns=["cluster_id", "namespace", "kind", "name", "owner_kind", "owner_name"],
    )
    got = workloads(pods, owners).set_index("pod")
    assert tuple(got.loc["web-5d8f7b9c4d-x2x9q", ["workload_kind", "workload_name"]]) == (
        "Deployment",
        "web",
    )
    assert tuple(got.loc["report-123-abcde", ["workload_kind", "workload_name"]]) == (
        "CronJob",
        "report",
    )
    assert tuple(got.loc["etcd-n1", ["workload_kind", "workload_name"]]) == ("StaticPod", "etcd-n1")
    assert tuple(got.loc["db-0", ["workload_kind", "workload_name"]]) == ("StatefulSet", "db")
    fallback = got.loc["api-7c9d8f6b5-zt4vq"]
    assert (fallback.workload_kind, fallback.workload_name, fallback.workload_source) == (
        "Deployment",
        "api",
        "pod_name_fallback",
    )
    bare = got.loc["debug-shell"]  # not a generated suffix (Kubernetes' names have no vowels)
    assert (bare.workload_kind, bare.workload_name, bare.workload_source) == (
        "Pod",
        "debug-shell",
        "bare_pod",
    )


# distribution: one cluster-day, owners x ($3 direct on n1) and y ($1 on n1, unowned $0 ...)
BASIS = pd.DataFrame(
    [
        {
            "cluster_id": "c1",
            "usage_date": DAY,
            "node": "n1",
            "team": "x",
            "cost_center": "cx",
            "application": "ax",
            "owner_status": "owned",
            "direct": 3.0,
            "cpu": 1.0,
            "memory": 2.0,
            "storage": 0.0,
            "network": 0.0,
        },
        {
            "cluster_id": "c1",
            "usage_date": DAY,
            "node": "n2",
            "team": "y",
            "cost_center": "cy",
            "application": "ay",
            "owner_status": "owned",
            "direct": 1.0,
            "cpu": 1.0,
            "memory": 0.0,
            "storage": 0.0,
            "network": 0.0,
        },
    ]
)
POOL = pd.DataFrame(
    [
        {
            "cluster_id": "c1",
            "usage_date": DAY,
            "node": "n1",
            "cost_family": "compute",
            "pool": "platform",
            "amount": 8.0,
        }
    ]
)


def shares(pool_spec, pools=POOL, basis=BASIS, preset=None):
    distribution = {"pools": {"platform": pool_spec}} if pool_spec else {}
    if preset:
        distribution["preset"] = preset
    settings = Settings.from_config({"distribution": distribution})
    out = distribute(pools, basis, settings, basis.iloc[0:0])
    return out.groupby(["team", "owner_status"])["amount"].sum().to_dict()


def test_distribution_rules():
    assert shares(None) == {("platform", "owned"): 8.0}  # keep, the default
    assert shares({"rule": "separate"}) == {("unallocated", "separate"): 8.0}
    assert shares({"rule": "proportional"}) == {("x", "owned"): 6.0, ("y", "owned"): 2.0}
    assert shares({"rule": "proportional", "basis": "memory"}) == {("x", "owned"): 8.0}
    assert shares({"rule": "even"}) == {("x", "owned"): 4.0, ("y", "owned"): 4.0}
    assert shares({"rule": "proportional", "scope": "node"}) == {("x", "owned"): 8.0}
    fixed = {
        "rule": "fixed",
        "shares": [{"team": "a", "percent": 25}, {"team": "b", "percent": 75}],
    }
    assert shares(fixed) == {("a", "owned"): 2.0, ("b", "owned"): 6.0}
    hybrid = shares(None, preset="hybrid")  # README default hybrid_share 30
    assert hybrid == pytest.approx(
        {("platform", "owned"): 2.4, ("x", "owned"): 4.2, ("y", "owned"): 1.4}
    )


def test_a_pool_with_zero_basis_becomes_separate():
    assert shares({"rule": "proportional", "basis": "storage"}) == {
        ("unallocated", "separate"): 8.0
    }


def test_fleet_scope_weighs_fleet_wide_but_books_in_the_pool_cluster():
    basis = pd.concat([BASIS, BASIS.iloc[[0]].assign(cluster_id="c2", team="z", direct=4.0)])
    out = distribute(
        POOL,
        basis,
        Settings.from_config(
            {"distribution": {"pools": {"platform": {"rule": "proportional", "scope": "fleet"}}}}
        ),
        basis.iloc[0:0],
    )
    assert set(out["cluster_id"]) == {"c1"}
    got = out.groupby("team")["amount"].sum().to_dict()
    assert got == pytest.approx({"x": 3.0, "y": 1.0, "z": 4.0})


def test_cents_three_one_dollar_lines_against_ten():
    billed = round_lines(
        {"c|compute|b": Decimal(1), "c|compute|a": Decimal(1), "c|compute|c": Decimal(1)},
        Decimal("10.00"),
    )
    assert billed == {
        "c|compute|a": Decimal("3.34"),
        "c|compute|b": Decimal("3.33"),
        "c|compute|c": Decimal("3.33"),
    }


def test_cents_four_one_cent_lines_against_two_cents():
    lines = {k: Decimal("0.01") for k in ["d", "c", "b", "a"]}
    billed = round_lines(lines, Decimal("0.02"))
    assert billed == {
        "a": Decimal("0.01"),
        "b": Decimal("0.01"),
        "c": Decimal("0.00"),
        "d": Decimal("0.00"),
    }
    assert all(v >= 0 for v in billed.values())


def test_cents_tie_break_is_bytewise():
    # "B" (0x42) sorts before "a" (0x61) byte-wise
    billed = round_lines({"a": Decimal(1), "B": Decimal(1)}, Decimal("0.01"))
    assert billed == {"B": Decimal("0.01"), "a": Decimal("0.00")}


def _owner_days(rows):
    return pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "usage_date": DAY,
                "cost_family": "compute",
                "team": t,
                "cost_center": cc,
                "application": "unallocated",
                "owner_status": status,
                "total_cost": cost,
            }
            for t, cc, status, cost in rows
        ]
    )


def _close(owners, scope_cost, *, policy="separate", as_of=dt.date(2026, 11, 19), link=True):
    config = {
        "clusters": [
            {"id": "c1", "provider": "aws", **({"billing_link": {"tags": ["x"]}} if link else {})}
        ],
        "close": {"unassigned_policy": policy},
    }
    scope = pd.DataFrame(
        [
            {"cluster_id": "c1", "usage_date": DAY, "cost_family": "compute", "in_scope_cost": c}
            for c in (
                []
                if scope_cost is None
                else scope_cost
                if isinstance(scope_cost, list)
                else [scope_cost]
            )
        ],
        columns=["cluster_id", "usage_date", "cost_family", "in_scope_cost"],
    )
    status = pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "usage_date": DAY,
                "has_usage": True,
                "has_billing": True,
                "estimated_nodes": 0,
            }
        ]
    )
    bill = close_month(
        dt.date(2026, 10, 1), owners, scope, status, Settings.from_config(config), as_of
    )
    return bill.set_index("line_key")


def test_close_scales_to_the_invoice_and_sums_exactly():
    owners = _owner_days(
        [
            ("t1", "cc-1", "owned", 60.0),
            ("t2", "cc-2", "owned", 30.0),
            ("unallocated", "unallocated", "unowned", 10.0),
        ]
    )
    bill = _close(owners, 110.0)
    # factor 1.1: 66.00, 33.00, 11.00
    assert bill["billed_cost"].to_dict() == {
        "cc-1": Decimal("66.00"),
        "cc-2": Decimal("33.00"),
        UNASSIGNED: Decimal("11.00"),
    }
    assert (bill["close_status"] == "ready").all() and bill["is_reconciled"].all()
    proportional = _close(owners, 110.0, policy="proportional")
    # the $10 unassigned spread 2:1 -> estimates 66.666667 / 33.333333, target 110
    assert proportional["billed_cost"].to_dict() == {
        "cc-1": Decimal("73.34"),
        "cc-2": Decimal("36.66"),
        UNASSIGNED: Decimal("0.00"),
    }
    assert proportional.loc[UNASSIGNED, "estimated_cost"] == Decimal("10.000000")
    assert proportional.loc["cc-1", "allocation_estimate"] == Decimal("66.666667")


def test_close_edge_cases():
    owners = _owner_days([("t1", "cc-1", "owned", 5.0)])
    zero = _close(owners, 0.0)
    assert zero.loc["cc-1", "billed_cost"] == Decimal("0.00") and zero.loc["cc-1", "factor"] == 0
    negative = _close(owners, -3.0)
    assert negative.loc["cc-1", "billed_cost"] == Decimal("5.00")
    assert not negative.loc["cc-1", "is_reconciled"]
    # negative by less than half a cent: still no invoice, not a zero invoice
    tiny = _close(owners, -0.004)
    assert tiny.loc["cc-1", "billed_cost"] == Decimal("5.00")
    assert not tiny.loc["cc-1", "is_reconciled"] and tiny.loc["cc-1", "factor"] == 1
    empty = _close(owners, None, as_of=dt.date(2026, 11, 6))  # before the deadline
    assert (
        empty.loc["cc-1", "close_status"] == "blocked"
        and empty.loc["cc-1", "reason"] == "empty_slice"
    )
    late = _close(owners, None)  # past the deadline: estimated fallback
    assert late.loc["cc-1", "close_status"] == "estimated_fallback"
    bounds = _close(owners, 30.0, as_of=dt.date(2026, 11, 6))  # factor 6 > 5
    assert bounds.loc["cc-1", "reason"] == "factor_out_of_bounds"
    nothing = _close(owners.iloc[0:0], 7.0)
    assert nothing.loc[UNASSIGNED, "billed_cost"] == Decimal("7.00")
    no_link = _close(owners, None, link=False)
    assert no_link.loc["cc-1", "billed_cost"] == Decimal("5.00")
    assert not no_link.loc["cc-1", "is_reconciled"] and no_link.loc["cc-1", "factor"] == 1


def test_close_rounds_decimal_ties_half_away_from_zero():
    """The estimate and the invoice slice are sums of the decimals the amounts denote, rounded
    half away from zero: summed as doubles, each of these ties falls just below the half."""
    owners = _owner_days([("t1", "cc-1", "owned", 6.8649), ("t1", "cc-1", "owned", 0.0085535)])
    assert 6.8649 + 0.0085535 < 6.8734535  # the double sum is below the tie
    assert 4.808 + 3.017 < 7.825  # two billing amounts of a slice, likewise
    bill = _close(owners, [4.808, 3.017])
    assert bill.loc["cc-1", "estimated_cost"] == Decimal("6.873454")
    assert bill.loc["cc-1", "target_cost"] == Decimal("7.83")


def storage_row(h, namespace, pod, pvc, pv):
    return {
        "cluster_id": "c1",
        "hour": hour(h),
        "usage_date": DAY,
        "namespace": namespace,
        "pod": pod,
        "node": "n1",
        "persistentvolumeclaim": pvc,
        "persistentvolume": pv,
        "csi_volume_handle": "",
    }


def test_volumes_split_by_mount_hours_else_namespace_else_unattributed():
    rows = [pod_row("n1", "shop", p, 0, 1, 1, 1, 1) for p in ("a", "b")]
    rows += [pod_row("n1", "kube-system", "k", 0, 1, 1, 1, 1)]
    use = usage(rows)
    use.storage = pd.DataFrame(
        [
            storage_row(0, "shop", "a", "data", "pv-1"),
            storage_row(1, "shop", "a", "data", "pv-1"),
            storage_row(2, "shop", "a", "data", "pv-1"),
            storage_row(3, "shop", "b", "data", "pv-1"),
            storage_row(0, "shop", "", "cache", "pv-2"),
            storage_row(0, "kube-system", "k", "logs", "pv-4"),
        ]
    ).astype({"hour": "datetime64[ns, UTC]"})
    volumes = pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "usage_date": DAY,
                "pv_name": pv,
                "resource_id": pv,
                "volume_cost": c,
            }
            for pv, c in (("pv-1", 8.0), ("pv-2", 2.0), ("pv-3", 1.0), ("pv-4", 4.0))
        ]
    )
    ledger = build_ledger(
        use, pricing({"n1": 8.0}, volumes=volumes), CONFIG, as_of=dt.date(2026, 11, 19)
    )
    # pv-1 mounted 3 h by a, 1 h by b: $6 / $2; pv-2 claimed, mounted by nobody: its namespace
    assert pod(ledger, "a").storage_cost == pytest.approx(6.0)
    assert pod(ledger, "b").storage_cost == pytest.approx(2.0)
    # Lead's ruling 3a: the pod mart's used_cost is the pod's direct cost, CPU and memory used
    # (4 × 1/4 + 4 × 1/8 = 1.5) plus its volumes; used + workload idle = total.
    assert pod(ledger, "a").used_cost == pytest.approx(1.5 + 6.0)
    assert pod(ledger, "b").used_cost == pytest.approx(1.5 + 2.0)
    for name in ("a", "b", "k"):
        row = pod(ledger, name)
        assert row.used_cost + row.workload_idle_cost == pytest.approx(row.total_cost)
    shop = ledger.namespace_days.set_index("namespace")
    assert shop.loc["shop", "storage_cost"] == pytest.approx(2.0)
    day = ledger.cluster_days.iloc[0]
    assert day.unattributed_storage_cost == pytest.approx(1.0)  # pv-3: no claim that day
    # direct: pods' used compute (a, b: 4 × 1/4 + 4 × 1/8 each = 1.5) + $8 + $2 of volumes;
    # pv-4 belongs to a platform namespace: platform
    assert day.direct_cost == pytest.approx(2 * 1.5 + 10.0)
    assert day.platform_cost == pytest.approx(1.5 + 4.0)
    storage = ledger.owner_days[ledger.owner_days["cost_family"] == "storage"]
    # default policy keeps the unattributed pool and the platform's volume with the platform
    kept = storage[storage["team"] == "platform"]
    assert kept["unattributed_storage_share_cost"].sum() == pytest.approx(1.0)
    assert kept["platform_share_cost"].sum() == pytest.approx(4.0)


def test_categories_sum_to_the_cost_in_scope_with_fees_and_unallocated():
    rows = [pod_row("n1", "shop", "a", 0, 1, 1, 1, 1)]
    unallocated = pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "usage_date": DAY,
                "cost_family": "storage",
                "resource_id": "vol-x",
                "reason": "no_match",
                "cost": 3.0,
            }
        ]
    )
    node_pricing = pricing({"n1": 8.0}, unallocated=unallocated)
    node_pricing.platform_fees = pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "usage_date": DAY,
                "cost_family": "compute",
                "resource_id": "arn",
                "cost": 2.4,
            }
        ]
    )
    node_pricing.scope = pd.DataFrame(
        [
            {"cluster_id": "c1", "usage_date": DAY, "cost_family": f, "in_scope_cost": c}
            for f, c in (("compute", 10.4), ("storage", 3.0))
        ]
    )
    ledger = build_ledger(usage(rows), node_pricing, CONFIG, as_of=dt.date(2026, 11, 19))
    day = ledger.cluster_days.iloc[0]
    assert day.platform_cost == pytest.approx(2.4)
    assert day.unallocated_cost == pytest.approx(3.0)
    assert day.ledger_cost == pytest.approx(day.billed_cost_in_scope) and day.ledger_cost == 13.4
    bill = ledger.bill_lines.set_index("line_id")
    assert bill.loc["c1|storage|__unassigned__", "billed_cost"] == Decimal("3.00")


def _status(days: dict) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "cluster_id": "c1",
                "usage_date": dt.date(2026, 10, d),
                "has_usage": u,
                "has_billing": b,
                "estimated_nodes": e,
            }
            for d, (u, b, e) in days.items()
        ]
    )


def _close_status(days, as_of):
    owners = _owner_days([("t1", "cc-1", "owned", 5.0)])
    scope = pd.DataFrame(
        [{"cluster_id": "c1", "usage_date": DAY, "cost_family": "compute", "in_scope_cost": 5.0}]
    )
    config = {"clusters": [{"id": "c1", "provider": "aws", "billing_link": {"tags": ["x"]}}]}
    bill = close_month(
        dt.date(2026, 10, 1), owners, scope, _status(days), Settings.from_config(config), as_of
    )
    return bill.iloc[0].close_status, bill.iloc[0].reason


def test_completeness_rules():
    full = {5: (True, True, 0), 6: (True, True, 0)}
    assert _close_status(full, dt.date(2026, 11, 4)) == ("ready", None)  # grace: Oct 31 + 4
    assert _close_status(full, dt.date(2026, 11, 3)) == ("blocked", "grace_window")
    # a scaled-to-zero day between evidence is complete; days outside first..last don't count
    assert _close_status(
        {5: (True, True, 0), 6: (False, False, 0), 9: (True, True, 0)}, dt.date(2026, 11, 5)
    ) == ("ready", None)
    # a node still on an estimate blocks until the deadline (Oct 31 + 10), then falls back
    estimated = {5: (True, True, 1)}
    assert _close_status(estimated, dt.date(2026, 11, 10)) == ("blocked", "incomplete_days")
    assert _close_status(estimated, dt.date(2026, 11, 11))[0] == "estimated_fallback"
    # billing without usage is complete once its 7-day repair window has passed
    assert _close_status({30: (False, True, 0)}, dt.date(2026, 11, 6)) == (
        "blocked",
        "incomplete_days",
    )
    assert _close_status({30: (False, True, 0)}, dt.date(2026, 11, 7)) == ("ready", None)


def test_rounding_to_the_currency_minor_unit():
    lines = {"a": Decimal(1), "b": Decimal(1), "c": Decimal(1)}
    assert round_lines(lines, Decimal("1000"), Decimal(1)) == {
        "a": Decimal(334),
        "b": Decimal(333),
        "c": Decimal(333),
    }  # JPY: whole yen
    assert round_lines(lines, Decimal("1.000"), Decimal("0.001")) == {
        "a": Decimal("0.334"),
        "b": Decimal("0.333"),
        "c": Decimal("0.333"),
    }  # KWD: fils


def test_workload_idle_owner_rule_and_pooled():
    # a: claim 2 cores / 4 GiB, uses 1 / 2 -> cost 2 + 2 = 4, used 1 + 1 = 2, idle 2 (team x);
    # b: claim = usage 1 core / 2 GiB -> cost 2, used 2, idle 0 (team y). Node $8.
    rows = [
        pod_row("n1", "shop", "a", 0, 1, 2, 2, 4, labels="label_team:x"),
        pod_row("n1", "shop", "b", 0, 1, 1, 2, 2, labels="label_team:y"),
    ]
    owner = build_ledger(usage(rows), pricing({"n1": 8.0}), CONFIG, as_of=dt.date(2026, 11, 19))
    idle = owner.owner_days.groupby("team")["workload_idle_cost"].sum()
    assert idle.get("x") == pytest.approx(2.0) and idle.get("y", 0.0) == 0.0
    pooled_config = {**CONFIG, "distribution": {"pools": {"workload_idle": "proportional"}}}
    pooled = build_ledger(
        usage(rows), pricing({"n1": 8.0}), pooled_config, as_of=dt.date(2026, 11, 19)
    )
    shares = pooled.owner_days.groupby("team")["workload_idle_share_cost"].sum()
    # the $2 pool spread by direct (used) cost 2 : 2
    assert shares.get("x") == pytest.approx(1.0) and shares.get("y") == pytest.approx(1.0)
    assert pooled.owner_days["workload_idle_cost"].sum() == 0.0
