"""The questions analysts ask (issue 16), each answered by one query on one mart, on a small
demo-shaped fleet: `generate_fleet` with the demo's defaults (4 clusters, messy) at 8 nodes
(2 a cluster), 4 pods a node, 33 days from 2026-10-01, built the `kubeledger demo` way (the
restated CUR loaded later) and October sealed as of 2026-11-19 (the Makefile's demo AS_OF).

Each test holds its question (docstring), its one query (a module constant, quoted verbatim
in the README's "Analyst questions, one query each"), and its answer, asserted with `==`. No
expected value is read from the mart under test: each comes from the fleet's own definition
(kubeledger/generate: catalog.py's namespaces and labels, config.py's cluster defaults and
mappings, onprem.py's rate card as written to landing/rate_card/onprem-dc1.csv), from the
sealed store (schema `sealed`, written by the close in Python, never by dbt), or from a mart
built by other models (fct_cluster_costs_daily, fct_pod_costs_daily, fct_owner_costs_daily).

What the fleet definition fixes, checked by hand once here:
- Owners (SPEC §6; catalog.py TEMPLATES and NAMESPACE_LABELS, config.py's mappings). The only
  user workload with no team or cost center from any rule is data-pipeline's
  `airflow-scheduler` (no labels; its namespace has none). Every other one resolves: checkout
  (labels, namespace labels), cart (`Team` / `owner` labels), search (`squad` → team, the
  namespace's cost center), ml-training (the hex `team` value falls through to the
  namespace's team), web (the namespace's team), etl-runner / nightly-report (`team: data`;
  the UUID cost center falls through). On onprem-dc1 the cluster default
  `cost_center: datacenter` owns even airflow-scheduler. So unowned pod cost is data-pipeline
  on eks-prod, gke-analytics and aks-web, and nowhere else.
- Team payments (the bill's lines are per cost center): checkout-api (cc-1001 label),
  checkout-db (cc-1001 from its namespace), checkout-worker and cart (cc-1050: the selector
  mapping `app.kubernetes.io/name in (cart, checkout-worker)` is rule 1), cart-redis (no cost
  center: the cluster default, `datacenter` on onprem-dc1, none on the clouds, so the
  `__unassigned__` line). Nothing else carries cc-1001 in compute or storage (the checkout
  load balancer is a namespace-level object: the namespace mapping gives it to team
  storefront) nor cc-1050 at all. The default preset `platform_absorbs` keeps platform and
  infrastructure idle with the platform owner and workload idle with its owner, so payments
  gets no distributed share.
- onprem-dc1's rate card (landing/rate_card/onprem-dc1.csv): its two nodes by name,
  dc1-cp-01 at 1.20/h and dc1-node-01 at 0.99/h (a node-name row beats the label rows), both up
  every hour of October: compute (1.20 + 0.99) × 24 × 31 = 1629.36, 52.56 a day; volumes
  (storage-tier ceph-ssd) 0.06 per GiB-month, every claim of catalog.py bound all month:
  prometheus 100 (platform), checkout-db 50 (cc-1001), elasticsearch 3 × 100 (cc-2002),
  model-server's shared-models 200 + trainer 2 × 200 (cc-3003), cart-redis 10 +
  reports-cache 20 (datacenter) = 1080 GiB → 64.80 (6.00, 3.00, 18.00, 36.00, 1.80), 64.80 / 31
  a day. A rate card has no invoice: the cluster's slices are billed at the ledger estimate
  (factor 1), which is what they are.
- October is wholly billed: the bills cover usage to 2026-10-31 (generate_fleet's default,
  the last two days of usage unbilled), and every cloud cluster has a billing link.

Question 6, "does the FOCUS export's BilledCost sum to the sealed bill", is answered in
tests/test_export_focus.py (test_the_sealed_export_is_the_sealed_bill_line_for_line and
test_the_sealed_export_passes_the_focus_rules_and_no_column_is_always_empty): it is a file,
not a mart query, so it is not repeated here.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from tests.test_report import built_fleet, copy_of
from tests.warehouse_builder import close_month, query

pytestmark = pytest.mark.slow

MONTH = "2026-10"
AS_OF = dt.date(2026, 11, 19)
DAY = dt.date(2026, 10, 15)
CLOUDS = ("aks-web", "eks-prod", "gke-analytics")
ONPREM = "onprem-dc1"
CENT = Decimal("0.01")

# by hand, from the rate card (module docstring)
ONPREM_COMPUTE = (Decimal("1.20") + Decimal("0.99")) * 24 * 31  # 1629.36
ONPREM_STORAGE = Decimal("0.06") * 1080  # 64.80
ONPREM_STORAGE_LINES = {
    "onprem-dc1|storage|__unassigned__": Decimal("0.00"),
    "onprem-dc1|storage|cc-1001": Decimal("0.06") * 50,  # checkout-db
    "onprem-dc1|storage|cc-2002": Decimal("0.06") * 300,  # elasticsearch
    "onprem-dc1|storage|cc-3003": Decimal("0.06") * 600,  # shared-models + trainer
    "onprem-dc1|storage|datacenter": Decimal("0.06") * 30,  # cart-redis + reports-cache
    "onprem-dc1|storage|platform": Decimal("0.06") * 100,  # prometheus
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    # the report's fleet is this fleet (generate_fleet(nodes=8, days=33, pods_per_node=4),
    # built the demo way), built once per session: a copy of it, closed
    db = copy_of(built_fleet(tmp_path_factory), tmp_path_factory.mktemp("analyst"), "closed.duckdb")
    close_month(db, MONTH, AS_OF)
    return db


README = Path(__file__).parents[1] / "README.md"


# --- 1. How is the month's bill backed? ------------------------------------------------------

BILL_BACKING = """
select backing, billed_cost, bill_share_pct
from marts.rpt_metrics_bill_backing_monthly
where bill_month = date '2026-10-01'
order by backing_order
"""


def test_how_the_months_bill_is_backed(warehouse):
    """How is October's bill backed: by invoice, by the rate card, by the ledger's estimate
    (money and share of the bill)?"""
    # The sealed store: the bill's total, and what each cloud cluster's invoice slices billed.
    [(total,)] = query(
        warehouse, "select billed_cost from sealed.sealed_bills where bill_month = ?", [MONTH]
    )
    clouds = query(
        warehouse,
        """select cluster_id, sum(invoice_cost), sum(billed_cost) from sealed.sealed_bill_clusters
           where bill_month = ? and cluster_id <> ? group by cluster_id order by cluster_id""",
        [MONTH, ONPREM],
    )
    assert [cluster for cluster, _, _ in clouds] == list(CLOUDS)
    assert all(invoiced == billed for _, invoiced, billed in clouds)  # invoiced, to the cent
    invoice = sum(billed for _, _, billed in clouds)
    assert invoice + ONPREM_COMPUTE + ONPREM_STORAGE == total  # the rate card's, by hand

    def share(amount: Decimal) -> float:
        return round(float(amount) / float(total) * 100, 2)

    assert query(warehouse, BILL_BACKING) == [
        ("invoice", invoice, share(invoice)),
        ("rate_card", Decimal("1694.16"), share(Decimal("1694.16"))),  # 1629.36 + 64.80
        ("estimate", Decimal("0"), 0.0),  # every cloud cluster linked, October wholly billed
        ("invoice_and_estimate", Decimal("0"), 0.0),
    ]


# --- 2. Which namespaces have no owner? --------------------------------------------------------

UNOWNED_NAMESPACES = """
select cluster_id, namespace, round(sum(used_cost), 2) as unowned_direct_cost
from marts.fct_pod_costs_daily
where is_unowned and usage_date between date '2026-10-01' and date '2026-10-31'
group by cluster_id, namespace
order by unowned_direct_cost desc, cluster_id
"""


def test_which_namespaces_have_no_owner(warehouse):
    """Which namespaces have unowned direct cost in October, most expensive first? Platform
    namespaces (kube-system, monitoring, openshift-*, ...) are platform cost, never unowned."""
    # Only airflow-scheduler is unowned (module docstring), and it mounts no volume, so each
    # cloud cluster's unowned compute direct cost in the owner mart (built from the node-level
    # owner costs, not from the pod mart) is that namespace's.
    owner_mart = query(
        warehouse,
        """select cluster_id, round(sum(direct_cost), 2) from marts.fct_owner_costs_daily
           where owner_status = 'unowned' and cost_family = 'compute'
               and usage_date between date '2026-10-01' and date '2026-10-31'
           group by cluster_id""",
    )
    assert sorted(cluster for cluster, _ in owner_mart) == list(CLOUDS)  # not onprem-dc1
    expected = sorted(
        ((cluster, "data-pipeline", cost) for cluster, cost in owner_mart),
        key=lambda row: (-row[2], row[0]),
    )
    assert query(warehouse, UNOWNED_NAMESPACES) == expected


# --- 3. What share of a day is idle, platform, owned, reconciled? ----------------------------

DAY_SHARES = """
select cluster_id, idle_ratio, platform_ratio, ownership_coverage_ratio, reconciled_ratio
from marts.rpt_metrics_cluster_daily
where usage_date = date '2026-10-15'
order by cluster_id
"""

TEAM_DAY_SHARES = """
select team, idle_ratio, platform_share_ratio, ownership_coverage_ratio, reconciled_ratio
from marts.rpt_metrics_daily
where cluster_id = 'onprem-dc1' and usage_date = date '2026-10-15' and team = 'platform'
"""


def _cluster_day(db: Path) -> dict[str, tuple[float, float, float, float, float]]:
    """fct_cluster_costs_daily (the allocation marts' cluster-day) on DAY: ledger cost, idle
    (workload + infrastructure), platform, infrastructure idle, unallocated."""
    rows = query(
        db,
        """select cluster_id, ledger_cost, workload_idle_cost + infrastructure_idle_cost,
                  platform_cost, infrastructure_idle_cost, unallocated_cost
           from marts.fct_cluster_costs_daily where usage_date = ?""",
        [DAY],
    )
    return {cluster: tuple(values) for cluster, *values in rows}


def test_what_share_of_a_day_is_idle_platform_owned_reconciled(warehouse):
    """On 2026-10-15, what share of each cluster's cost is idle, platform, owned (ownership
    coverage) and reconciled to invoice: ratios from 0 to 1, rounded to 6 decimals?"""
    days = _cluster_day(warehouse)
    # By hand: onprem-dc1's day is 52.56 of compute and 64.80 / 31 of volumes (rate card).
    assert days[ONPREM][0] == pytest.approx(52.56 + 64.80 / 31, abs=1e-9)
    unowned = dict(
        query(
            warehouse,
            """select cluster_id, sum(total_cost) from marts.fct_pod_costs_daily
               where is_unowned and usage_date = ? group by cluster_id""",
            [DAY],
        )
    )
    expected = []
    for cluster in sorted(days):
        cost, idle, platform, _, unallocated = days[cluster]
        # owned = everything but unallocated resources and unowned pods: platform_absorbs
        # keeps platform and infrastructure idle with the platform owner (SPEC §8)
        owned = cost - unallocated - unowned.get(cluster, 0.0)
        # every October day is priced from the current billing lines (the restated CUR was
        # allocated again before the close) or from the rate card: reconciled is 1
        expected.append(
            (cluster, round(idle / cost, 6), round(platform / cost, 6), round(owned / cost, 6), 1.0)
        )
    # onprem-dc1 is wholly owned by construction (cluster default cost center, no bill so no
    # unallocated resources): 1.0 exactly, not 0.9999999999999996
    assert expected[-1][3] == 1.0
    assert query(warehouse, DAY_SHARES) == expected


def test_what_share_of_the_platform_teams_day_is_idle_and_platform(warehouse):
    """On 2026-10-15, what share of the platform team's cost on onprem-dc1 is idle, platform,
    owned and reconciled?"""
    _, _, platform, infrastructure_idle, _ = _cluster_day(warehouse)[ONPREM]
    # platform_absorbs: the platform team's day is the platform pool and infrastructure idle
    # (kept), nothing else; it is owned (keep names the platform owner), the rate card is
    # reconciled
    team_day = platform + infrastructure_idle
    assert query(warehouse, TEAM_DAY_SHARES) == [
        (
            "platform",
            round(infrastructure_idle / team_day, 6),
            round(platform / team_day, 6),
            1.0,
            1.0,
        )
    ]


# --- 4. October's bill lines: months are dates -------------------------------------------------

OCTOBER_BILL_LINES = """
select line_id, bill_state, billed_cost
from marts.fct_bill_lines_monthly
where bill_month = date '2026-10-01'
order by line_id
"""


def test_octobers_bill_lines(warehouse):
    """What are October's bill lines? (A month is a date, its first day.)"""
    [(kind,)] = query(
        warehouse,
        """select data_type from information_schema.columns
           where table_schema = 'marts' and table_name = 'fct_bill_lines_monthly'
               and column_name = 'bill_month'""",
    )
    assert kind == "DATE"
    sealed = query(
        warehouse,
        """select line_id, 'sealed', billed_cost from sealed.sealed_bill_lines
           where bill_month = ? order by line_id""",
        [MONTH],
    )
    lines = query(warehouse, OCTOBER_BILL_LINES)
    assert lines == sealed
    billed = {line_id: cost for line_id, _, cost in lines}
    # by hand from the rate card: onprem-dc1's storage lines, and its compute lines' sum
    assert {k: v for k, v in billed.items() if k.startswith("onprem-dc1|storage|")} == (
        ONPREM_STORAGE_LINES
    )
    assert sum(v for k, v in billed.items() if k.startswith("onprem-dc1|compute|")) == (
        ONPREM_COMPUTE
    )
    # a generated-looking value never becomes an owner (catalog.GENERATED_COST_CENTER)
    assert not [k for k in billed if "550e8400" in k]


# --- 5. What does team payments pay, and why? ------------------------------------------------

PAYMENTS_EXPLAINED = """
select
    cluster_id,
    cost_family,
    sum(direct_cost) as direct_cost,
    sum(workload_idle_cost) as workload_idle_cost,
    sum(platform_share_cost) as platform_share_cost,
    sum(infrastructure_idle_share_cost) as infrastructure_idle_share_cost,
    sum(other_pools_share_cost) as other_pools_share_cost,
    min(factor) as factor,
    sum(billed_cost) as billed_cost,
    string_agg(line_id, ', ' order by line_id) as line_ids
from marts.rpt_owner_bill_explained
where bill_month = date '2026-10-01' and team = 'payments'
group by cluster_id, cost_family
order by cluster_id, cost_family
"""


def test_what_team_payments_pays_and_why(warehouse):
    """What does team payments pay on October's sealed bill, per cluster and cost family, and
    why (direct use, its own idle, shares of platform and infrastructure idle, the factor),
    adding up to its parts of the sealed lines?"""
    rows = query(warehouse, PAYMENTS_EXPLAINED)
    sealed = {
        line_id: (billed, estimate)
        for line_id, billed, estimate in query(
            warehouse,
            """select line_id, billed_cost, estimated_cost from sealed.sealed_bill_lines
               where bill_month = ?""",
            [MONTH],
        )
    }
    factors = {
        (cluster, family): factor
        for cluster, family, factor in query(
            warehouse,
            """select cluster_id, cost_family, factor from sealed.sealed_bill_clusters
               where bill_month = ?""",
            [MONTH],
        )
    }
    # payments' pods in the pod mart, per cluster, family and workload: direct, idle, estimate
    pods: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for cluster, workload, compute, used, idle, storage in query(
        warehouse,
        """select cluster_id, workload_name, sum(cpu_cost + memory_cost + gpu_cost),
                  sum(used_cost - storage_cost - network_cost), sum(workload_idle_cost),
                  sum(storage_cost)
           from marts.fct_pod_costs_daily
           where team = 'payments' and usage_date between date '2026-10-01' and date '2026-10-31'
           group by cluster_id, workload_name""",
    ):
        for key, value in {
            ("compute", "direct"): used,
            ("compute", "idle"): idle,
            ("compute", workload): compute,
            ("storage", "direct"): storage,
            ("storage", workload): storage,
        }.items():
            pods[cluster, key[0]][key[1]] += value
    clusters = sorted([*CLOUDS, ONPREM])
    assert [(row[0], row[1]) for row in rows] == [
        (cluster, family) for cluster in clusters for family in ("compute", "storage")
    ]  # no network: the checkout load balancer is storefront's
    for cluster, family, direct, idle, platform, infra, other, factor, billed, line_ids in rows:
        # why: its own use and idle (the pod mart), no share of anything (platform_absorbs)
        assert (platform, infra, other) == (0, 0, 0)
        assert float(direct) == pytest.approx(pods[cluster, family]["direct"], abs=1e-5)
        assert float(idle) == pytest.approx(pods[cluster, family]["idle"], abs=1e-5)
        assert factor == factors[cluster, family]
        # which lines: cc-1001 (and cc-1050 in compute) are wholly payments'; cart-redis is
        # on the line of cost-center-less owned cost (datacenter on onprem-dc1)
        shared = f"{cluster}|{family}|" + ("datacenter" if cluster == ONPREM else "__unassigned__")
        whole = [f"{cluster}|{family}|cc-1001"] + (
            [f"{cluster}|{family}|cc-1050"] if family == "compute" else []
        )
        assert sorted(set(line_ids.split(", "))) == sorted([shared, *whole])
        # how much: the whole lines to the cent, plus cart-redis's share of the shared line
        # (its estimate x the line's billed / the line's estimate), which the cent split
        # rounds down or up by at most one cent
        redis = Decimal(repr(pods[cluster, family]["cart-redis"]))
        line_billed, line_estimate = sealed[shared]
        exact = redis * line_billed / line_estimate
        whole_billed = sum(sealed[line][0] for line in whole)
        assert abs(billed - whole_billed - exact) < CENT, (cluster, family)
    # onprem-dc1's storage wholly by hand: checkout-db 50 GiB + cart-redis 10 GiB at 0.06
    [onprem_storage] = [row for row in rows if row[:2] == (ONPREM, "storage")]
    assert onprem_storage[8] == Decimal("3.00") + Decimal("0.60")


# --- Cost by label: a pod-day's `labels` ------------------------------------------------------


def test_a_pod_days_labels_are_its_normalized_labels_in_key_order(warehouse):
    """`fct_pod_costs_daily.labels` (what `labels['app']` groups by) holds exactly the
    pod-day's normalized labels, keys in ascending order, whatever order the labels came in."""
    pairs = query(
        warehouse,
        "select cluster_id, usage_date, namespace, pod, label_key, label_value "
        "from intermediate.int_pod_labels_daily",
    )
    expected: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    for *pod_day, key, value in pairs:
        expected[tuple(pod_day)].append((key, value))
    rows = query(
        warehouse,
        "select cluster_id, usage_date, namespace, pod, labels from marts.fct_pod_costs_daily",
    )
    labelled = {tuple(pod_day): labels for *pod_day, labels in rows if labels}
    assert labelled.keys() == expected.keys()
    several = [pod_day for pod_day, labels in labelled.items() if len(labels) > 2]
    assert len(several) > 100  # enough pods with several labels to show the order
    for pod_day, labels in labelled.items():
        assert list(labels.items()) == sorted(expected[pod_day]), pod_day


@pytest.mark.parametrize(
    "name",
    [
        "BILL_BACKING",
        "UNOWNED_NAMESPACES",
        "DAY_SHARES",
        "TEAM_DAY_SHARES",
        "OCTOBER_BILL_LINES",
        "PAYMENTS_EXPLAINED",
    ],
)
def test_the_readme_quotes_each_query_verbatim(name):
    """The README's "Analyst questions, one query each" shows the very query each test runs."""
    query_text = globals()[name].strip("\n")
    assert f"```sql\n{query_text}\n```" in README.read_text()
