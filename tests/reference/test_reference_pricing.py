"""Unit tests of the reference pricing itself (tests/reference/pricing.py): one small landing
folder per rule, written in the real formats, with numbers computed by hand in the comments.
No dbt, no warehouse."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json
import os
from pathlib import Path

import pytest

from tests.reference.pricing import price_fleet

D1, D2, D3, D4 = (dt.date(2026, 10, day) for day in (1, 2, 3, 4))
AS_OF = dt.date(2026, 11, 20)

# --------------------------------------------------------------------------- writers

POD_HEADER = (
    "report_period_start,report_period_end,interval_start,interval_end,node,namespace,pod,"
    "pod_usage_cpu_core_seconds,pod_request_cpu_core_seconds,pod_limit_cpu_core_seconds,"
    "pod_usage_memory_byte_seconds,pod_request_memory_byte_seconds,"
    "pod_limit_memory_byte_seconds,node_capacity_cpu_cores,node_capacity_cpu_core_seconds,"
    "node_capacity_memory_bytes,node_capacity_memory_byte_seconds,node_role,resource_id,"
    "pod_labels"
).split(",")
STORAGE_HEADER = (
    "report_period_start,report_period_end,interval_start,interval_end,namespace,pod,node,"
    "persistentvolumeclaim,persistentvolume,storageclass,csi_driver,csi_volume_handle,"
    "persistentvolumeclaim_capacity_bytes,persistentvolumeclaim_capacity_byte_seconds,"
    "volume_request_storage_byte_seconds,persistentvolumeclaim_usage_byte_seconds,"
    "persistentvolume_labels,persistentvolumeclaim_labels"
).split(",")
CUR2_HEADER = [
    "bill_payer_account_id",
    "bill_billing_period_start_date",
    "line_item_usage_account_id",
    "line_item_line_item_type",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "product_instance_type",
    "product_region",
    "savings_plan_savings_plan_a_r_n",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_net_savings_plan_effective_cost",
    "resource_tags",
]
AZURE_HEADER = [
    "BillingAccountId",
    "BillingPeriodStartDate",
    "Date",
    "SubscriptionId",
    "ResourceId",
    "MeterCategory",
    "Quantity",
    "UnitOfMeasure",
    "CostInBillingCurrency",
    "ChargeType",
    "PricingModel",
    "AdditionalInfo",
    "Tags",
]


def _write_csv(path: Path, header: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: row.get(key, "") for key in header})


def _koku(stamp: dt.datetime) -> str:
    return stamp.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


class Fleet:
    """A landing folder under construction."""

    def __init__(self, root: Path):
        self.root = root
        self.landing = root / "landing"
        self.pods: dict[tuple[str, dt.date], list[dict]] = {}
        self.storage: dict[tuple[str, dt.date], list[dict]] = {}
        self.labels: dict[tuple[str, dt.date], list[dict]] = {}
        self.nodes: dict[str, list[dict]] = {}

    def node(self, cluster, node, provider_id="", resource_id=""):
        self.nodes.setdefault(cluster, []).append(
            {"cluster_id": cluster, "node": node, "provider_id": provider_id}
        )
        self._resource = resource_id

    def run(
        self,
        cluster,
        node,
        day,
        hours,
        *,
        resource_id="",
        cores=2,
        labels="",
        first_hour=0,
        stamp=None,
    ):
        """`hours` full hours from `first_hour`, one pod per hour (fraction 1)."""
        for hour in range(first_hour, first_hour + hours):
            start = dt.datetime.combine(day, dt.time(hour))
            text = stamp(start) if stamp else _koku(start)
            self.pods.setdefault((cluster, day), []).append(
                {
                    "report_period_start": _koku(dt.datetime(day.year, day.month, 1)),
                    "interval_start": text,
                    "interval_end": text,
                    "node": node,
                    "namespace": "app",
                    "pod": f"{node}-pod",
                    "pod_usage_cpu_core_seconds": "360",
                    "pod_request_cpu_core_seconds": "720",
                    "pod_usage_memory_byte_seconds": "1",
                    "pod_request_memory_byte_seconds": "1",
                    "node_capacity_cpu_cores": str(cores),
                    "node_capacity_cpu_core_seconds": str(cores * 3600),
                    "node_capacity_memory_bytes": "8589934592",
                    "node_capacity_memory_byte_seconds": str(8589934592 * 3600),
                    "node_role": "worker",
                    "resource_id": resource_id,
                    "pod_labels": "",
                }
            )
            if labels:
                self.labels.setdefault((cluster, day), []).append(
                    {"interval_start": text, "node": node, "node_labels": labels}
                )

    def volume(self, cluster, day, pv, handle, labels="", gib=10):
        for hour in range(24):
            text = _koku(dt.datetime.combine(day, dt.time(hour)))
            self.storage.setdefault((cluster, day), []).append(
                {
                    "interval_start": text,
                    "interval_end": text,
                    "namespace": "app",
                    "pod": "db-0",
                    "persistentvolumeclaim": f"data-{pv}",
                    "persistentvolume": pv,
                    "storageclass": "gp3",
                    "csi_volume_handle": handle,
                    "persistentvolumeclaim_capacity_bytes": str(gib * 2**30),
                    "persistentvolumeclaim_capacity_byte_seconds": str(gib * 2**30 * 3600),
                    "volume_request_storage_byte_seconds": "0",
                    "persistentvolumeclaim_usage_byte_seconds": "0",
                    "persistentvolume_labels": labels,
                }
            )

    def write(self, config: dict) -> tuple[Path, dict]:
        for (cluster, day), rows in self.pods.items():
            folder = self.landing / "usage" / cluster / day.isoformat()
            _write_csv(folder / "r_openshift_usage_report.0.csv", POD_HEADER, rows)
            (folder / "manifest.json").write_text(json.dumps({"cluster_id": cluster}))
        for (cluster, day), rows in self.storage.items():
            folder = self.landing / "usage" / cluster / day.isoformat()
            _write_csv(folder / "r_openshift_usage_report.1.csv", STORAGE_HEADER, rows)
        for (cluster, day), rows in self.labels.items():
            folder = self.landing / "usage" / cluster / day.isoformat()
            _write_csv(
                folder / "r_openshift_usage_report.2.csv",
                [
                    "report_period_start",
                    "report_period_end",
                    "interval_start",
                    "interval_end",
                    "node",
                    "node_labels",
                ],
                rows,
            )
        for cluster, rows in self.nodes.items():
            _write_csv(
                self.landing / "cluster" / cluster / "nodes.csv",
                ["cluster_id", "node", "provider_id", "first_seen", "last_seen"],
                rows,
            )
        return self.landing, config


def cur_line(
    account,
    kind,
    day,
    resource,
    cost,
    *,
    usage_type="USE1-BoxUsage:m5.large",
    operation="RunInstances",
    product="AmazonEC2",
    hours=24,
    tags=None,
    instance_type="m5.large",
    end=None,
    start=None,
    net=True,
):
    start = start or f"{day.isoformat()}T00:00:00Z"
    end = end or f"{(day + dt.timedelta(days=1)).isoformat()}T00:00:00Z"
    return {
        "bill_payer_account_id": account,
        "bill_billing_period_start_date": f"{day.replace(day=1).isoformat()}T00:00:00Z",
        "line_item_usage_account_id": account,
        "line_item_line_item_type": kind,
        "line_item_usage_start_date": start,
        "line_item_usage_end_date": end,
        "line_item_product_code": product,
        "line_item_usage_type": usage_type,
        "line_item_operation": operation,
        "line_item_resource_id": resource,
        "line_item_usage_amount": str(hours),
        "line_item_unblended_cost": str(cost * 2),  # gross: never the figure used when net
        "line_item_net_unblended_cost": str(cost) if net else "",
        "product_instance_type": instance_type,
        "product_region": "us-east-1",
        "resource_tags": json.dumps(tags or {}),
    }


def write_cur(landing: Path, folder: str, rows: list[dict], mtime: float | None = None):
    path = landing / "billing" / "aws" / folder / "cur-00001.csv"
    _write_csv(path, CUR2_HEADER, rows)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def aws_node(fleet, cluster, node, instance, zone="us-east-1a"):
    fleet.node(cluster, node, f"aws:///{zone}/{instance}")


def node_cost(pricing, node, day):
    rows = pricing.node_days[
        (pricing.node_days.node == node) & (pricing.node_days.usage_date == day)
    ]
    assert len(rows) == 1, rows
    return rows.iloc[0].pricing_basis, rows.iloc[0].node_cost


def scope_of(pricing, cluster, day, family):
    rows = pricing.scope[
        (pricing.scope.cluster_id == cluster)
        & (pricing.scope.usage_date == day)
        & (pricing.scope.cost_family == family)
    ]
    return float(rows.in_scope_cost.sum())


LABELS_M5 = (
    "label_node_kubernetes_io_instance_type:m5.large|label_topology_kubernetes_io_region:us-east-1"
)


def _aws_config(link=None):
    cluster = {"id": "eks-a", "provider": "aws"}
    if link is not None:
        cluster["billing_link"] = link
    return {"clusters": [cluster]}


# --------------------------------------------------------------------------- tests


def test_shared_load_balancer_split_by_hours_else_evenly(tmp_path):
    fleet = Fleet(tmp_path)
    fleet.node(
        "aks-a",
        "aks-pool-1234-vmss000000",
        "azure:///subscriptions/s1/resourceGroups/mc_rg/providers/Microsoft.Compute/"
        "virtualMachineScaleSets/aks-pool-1234-vmss/virtualMachines/0",
    )
    for day in (D1, D2):
        fleet.run("aks-a", "aks-pool-1234-vmss000000", day, 24)
    landing, config = fleet.write({"clusters": [{"id": "aks-a", "provider": "azure"}]})
    lb = (
        "/subscriptions/s1/resourceGroups/MC_rg/providers/Microsoft.Network/"
        "loadBalancers/kubernetes"
    )
    # Three Services report the one AKS load balancer. On D1 hours are known from the optional
    # first_seen / last_seen columns: frontend all day (24 h), api all day (24 h), admin from
    # 12:00 (12 h): 24 × 24/60 = 9.6, 9.6 and 24 × 12/60 = 4.8. On D2 all three ran all day:
    # 8 each.
    _write_csv(
        landing / "cluster" / "aks-a" / "lb_services.csv",
        ["cluster_id", "namespace", "service", "load_balancer_id", "first_seen", "last_seen"],
        [
            {
                "cluster_id": "aks-a",
                "namespace": "web",
                "service": "frontend",
                "load_balancer_id": lb.lower(),
            },
            {"cluster_id": "aks-a", "namespace": "web", "service": "api", "load_balancer_id": lb},
            {
                "cluster_id": "aks-a",
                "namespace": "ops",
                "service": "admin",
                "load_balancer_id": lb,
                "first_seen": "2026-10-01T12:00:00Z",
            },
        ],
    )
    rows = [
        {
            "BillingAccountId": "ba",
            "BillingPeriodStartDate": "10/01/2026",
            "Date": day,
            "SubscriptionId": "s1",
            "ResourceId": lb,
            "MeterCategory": "Load Balancer",
            "Quantity": "24",
            "UnitOfMeasure": "1 Hour",
            "CostInBillingCurrency": "24",
            "ChargeType": "Usage",
            "PricingModel": "OnDemand",
        }
        for day in ("10/01/2026", "10/02/2026")
    ]
    _write_csv(landing / "billing" / "azure" / "2026-10" / "cost.csv", AZURE_HEADER, rows)
    pricing = price_fleet(landing, config, as_of=AS_OF)
    lbs = pricing.lb_days.set_index(["usage_date", "service"])["load_balancer_cost"]
    assert lbs[(D1, "frontend")] == pytest.approx(9.6)
    assert lbs[(D1, "api")] == pytest.approx(9.6)
    assert lbs[(D1, "admin")] == pytest.approx(4.8)
    assert lbs[(D1,)].sum() == 24.0
    assert lbs[(D2,)].tolist() == pytest.approx([8.0, 8.0, 8.0])
    assert lbs[(D2,)].sum() == 24.0
    assert scope_of(pricing, "aks-a", D1, "network") == 24.0


def test_lb_split_is_even_without_hours(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-1")
    fleet.run("eks-a", "n1", D1, 24)
    landing, config = fleet.write(_aws_config())
    arn = "arn:aws:elasticloadbalancing:us-east-1:111:loadbalancer/net/x/1"
    _write_csv(
        landing / "cluster" / "eks-a" / "lb_services.csv",
        ["cluster_id", "namespace", "service", "load_balancer_id"],
        [
            {"cluster_id": "eks-a", "namespace": n, "service": "s", "load_balancer_id": arn}
            for n in ("a", "b", "c")
        ],
    )
    write_cur(
        landing,
        "2026-10",
        [
            cur_line(
                "111",
                "Usage",
                D1,
                arn,
                1.0,
                product="AWSELB",
                usage_type="LoadBalancerUsage",
                operation="LoadBalancing:Network",
            ),
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # 1.00 over three Services: 1/3 each, the last taking the remainder so the sum is exact.
    assert pricing.lb_days.load_balancer_cost.tolist() == pytest.approx([1 / 3] * 3)
    assert pricing.lb_days.load_balancer_cost.sum() == 1.0


def test_estimate_tiers(tmp_path):
    fleet = Fleet(tmp_path)
    for node, instance in (
        ("a", "i-a"),
        ("c", "i-c"),
        ("s", "i-s"),
        ("b", "i-b"),
        ("d", "i-d"),
        ("e", "i-e"),
    ):
        aws_node(fleet, "eks-a", node, instance)
    spot = LABELS_M5 + "|label_eks_amazonaws_com_capacityType:SPOT"
    for day in (D1, D2, D3):
        fleet.run("eks-a", "a", day, 24, labels=LABELS_M5)
        fleet.run("eks-a", "c", day, 24, labels=LABELS_M5)
        fleet.run("eks-a", "s", day, 24, labels=spot)
    fleet.run("eks-a", "b", D3, 10, labels=LABELS_M5)  # new, m5.large on demand
    fleet.run("eks-a", "d", D3, 24, labels="label_node_kubernetes_io_instance_type:c5.large")
    fleet.run("eks-a", "e", D3, 24, labels="label_node_kubernetes_io_instance_type:r5.large")
    config = _aws_config()
    config["node_prices"] = [{"cluster": "eks-a", "node": "d", "hourly_price": 0.07}]
    landing, config = fleet.write(config)
    # Billed D1 and D2: a at 0.10/h both days; c at 0.30/h on D1 and 0.50/h on D2 (hours 24);
    # s (spot, same type) at 0.03/h. The export reaches the end of D2 only.
    rows = []
    for day, c_rate in ((D1, 0.30), (D2, 0.50)):
        rows.append(cur_line("111", "Usage", day, "i-a", 2.4))
        rows.append(cur_line("111", "Usage", day, "i-c", 24 * c_rate))
        rows.append(
            cur_line("111", "Usage", day, "i-s", 0.72, usage_type="USE1-SpotUsage:m5.large")
        )
    write_cur(landing, "2026-10", rows)
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # Tier 1, a on D3: its last billed day's rate, 2.4 / 24 h = 0.10/h × 24 h = 2.40.
    assert node_cost(pricing, "a", D3) == ("estimate", pytest.approx(2.4))
    # Tier 2, b (new on D3, 10 h): median of every billed m5.large on-demand us-east-1
    # node-day in the 7 days ending D3: a 0.10, 0.10, c 0.30, 0.50 → 0.20/h (the spot node's
    # 0.03 is another purchase option) → 10 × 0.20 = 2.00.
    assert node_cost(pricing, "b", D3) == ("estimate", pytest.approx(2.0))
    # Tier 3, d (c5.large, no peers): the rate card's 0.07/h × 24 = 1.68.
    assert node_cost(pricing, "d", D3) == ("estimate", pytest.approx(1.68))
    # Tier 4, e: no peers, no price → 0, unpriced.
    assert node_cost(pricing, "e", D3) == ("unpriced", 0.0)
    assert node_cost(pricing, "c", D2) == ("bill", pytest.approx(12.0))
    status = pricing.day_status.set_index("usage_date")
    assert status.loc[D3, "estimated_nodes"] == 6
    assert not status.loc[D3, "has_billing"]
    assert status.loc[D2, "has_billing"]


def test_median_window_is_seven_days(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "a", "i-a")
    aws_node(fleet, "eks-a", "b", "i-b")
    days = [dt.date(2026, 10, d) for d in range(1, 11)]
    fleet.run("eks-a", "a", days[0], 24, labels=LABELS_M5)  # billed 0.90/h on Oct 1 only
    for day in days[1:9]:
        fleet.run("eks-a", "a", day, 24, labels=LABELS_M5)
    fleet.run("eks-a", "b", days[9], 24, labels=LABELS_M5)
    landing, config = fleet.write(_aws_config())
    rows = [cur_line("111", "Usage", days[0], "i-a", 21.6)]
    rows += [cur_line("111", "Usage", day, "i-a", 2.4) for day in days[1:9]]  # 0.10/h
    write_cur(landing, "2026-10", rows)
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # b on Oct 10: the 7 days ending Oct 10 are Oct 4-10; a's billed rates there are Oct 4-9,
    # all 0.10 (Oct 1's 0.90 is outside) → 24 × 0.10 = 2.40.
    assert node_cost(pricing, "b", days[9]) == ("estimate", pytest.approx(2.4))


def test_billed_through_is_per_account_and_ignores_whole_month_rows(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-x", "x1", "i-x1")
    aws_node(fleet, "eks-y", "y1", "i-y1")
    for day in (D1, D2, D3, D4):
        fleet.run("eks-x", "x1", day, 24, labels=LABELS_M5)
        fleet.run("eks-y", "y1", day, 24, labels=LABELS_M5)
    landing, config = fleet.write(
        {"clusters": [{"id": "eks-x", "provider": "aws"}, {"id": "eks-y", "provider": "aws"}]}
    )
    x_rows = [cur_line("222", "Usage", day, "i-x1", 4.8) for day in (D1, D2, D3)]
    # D4 only half exported (to 12:00): not billed yet, so an estimate despite its line.
    x_rows.append(cur_line("222", "Usage", D4, "i-x1", 1.0, hours=12, end="2026-10-04T12:00:00Z"))
    write_cur(landing, "x/2026-10", x_rows)
    # Account 333 stopped exporting after D1; its month-long tax row (Oct 1 → Nov 1) and
    # support fee do not make it billed through October.
    y_rows = [cur_line("333", "Usage", D1, "i-y1", 2.4)]
    y_rows.append(
        cur_line(
            "333",
            "Usage",
            D1,
            "",
            30.0,
            product="AWSSupportBusiness",
            usage_type="Dollar",
            operation="",
            start="2026-10-01T00:00:00Z",
            end="2026-11-01T00:00:00Z",
        )
    )
    y_rows.append(
        cur_line(
            "333", "Tax", D1, "", 9.0, usage_type="Tax", operation="", end="2026-11-01T00:00:00Z"
        )
    )
    write_cur(landing, "y/2026-10", y_rows)
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # Account 222 is billed through D3 whatever 333 does.
    assert node_cost(pricing, "x1", D3) == ("bill", pytest.approx(4.8))
    # D4: 12 h exported of 24 → estimate at the last billed day's rate 4.8/24 = 0.2 × 24 h.
    assert node_cost(pricing, "x1", D4) == ("estimate", pytest.approx(4.8))
    assert node_cost(pricing, "y1", D1) == ("bill", pytest.approx(2.4))
    assert node_cost(pricing, "y1", D2) == ("estimate", pytest.approx(2.4))
    # The partial D4 line is still in scope (scope is the current billing lines).
    assert scope_of(pricing, "eks-x", D4, "compute") == pytest.approx(1.0)


def test_accounts_only_link_selects_nothing_beyond_own_resources(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    landing, config = fleet.write(_aws_config({"accounts": ["111"]}))
    write_cur(
        landing,
        "2026-10",
        [
            cur_line("111", "Usage", D1, "i-n1", 5.0),
            # Two unrelated machines and a disk on the same account: not the cluster's.
            cur_line("111", "Usage", D1, "i-other1", 12.0),
            cur_line("111", "Usage", D1, "i-other2", 12.0),
            cur_line(
                "111",
                "Usage",
                D1,
                "vol-other",
                3.0,
                usage_type="USE1-EBS:VolumeUsage.gp3",
                operation="CreateVolume-Gp3",
            ),
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert scope_of(pricing, "eks-a", D1, "compute") == 5.0
    assert scope_of(pricing, "eks-a", D1, "storage") == 0.0
    assert pricing.unallocated.empty
    assert pricing.billing_link.set_index("cluster_id").loc["eks-a", "has_billing_link"]


def test_tag_link_selects_unmatched_lines_as_unallocated_within_its_accounts(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    tag = {"user:kubernetes.io/cluster/eks-a": "owned"}
    landing, config = fleet.write(
        _aws_config({"accounts": ["111"], "tags": ["kubernetes.io/cluster/eks-a"]})
    )
    write_cur(
        landing,
        "2026-10",
        [
            cur_line("111", "Usage", D1, "i-n1", 5.0, tags=tag),
            cur_line(
                "111",
                "Usage",
                D1,
                "vol-orphan",
                3.0,
                tags=tag,
                usage_type="USE1-EBS:VolumeUsage.gp3",
                operation="CreateVolume-Gp3",
            ),
            cur_line("111", "Usage", D1, "i-untagged", 12.0),
            # Tagged, but on an account the link does not list: accounts restrict.
            cur_line(
                "999",
                "Usage",
                D1,
                "vol-elsewhere",
                7.0,
                tags=tag,
                usage_type="USE1-EBS:VolumeUsage.gp3",
                operation="CreateVolume-Gp3",
            ),
            # Tagged RDS: not an instance, volume or load balancer line → out of scope.
            cur_line(
                "111",
                "Usage",
                D1,
                "arn:aws:rds:us-east-1:111:db:x",
                9.0,
                tags=tag,
                product="AmazonRDS",
                usage_type="InstanceUsage:db.r6g.large",
                operation="CreateDBInstance",
            ),
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert scope_of(pricing, "eks-a", D1, "compute") == 5.0
    assert scope_of(pricing, "eks-a", D1, "storage") == 3.0
    assert pricing.unallocated[["resource_id", "reason", "cost"]].values.tolist() == [
        ["vol-orphan", "no_kubernetes_object", 3.0]
    ]


def test_eks_control_plane_fee_by_cluster_arn(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    landing, config = fleet.write(_aws_config({"accounts": ["111"]}))
    write_cur(
        landing,
        "2026-10",
        [
            cur_line("111", "Usage", D1, "i-n1", 5.0),
            # Real-shaped fee rows: the cluster ARN as resource ID and no cluster tag.
            cur_line(
                "111",
                "Usage",
                D1,
                "arn:aws:eks:us-east-1:111:cluster/eks-a",
                2.328,
                product="AmazonEKS",
                usage_type="USE1-AmazonEKS-Hours:perCluster",
                operation="CreateOperation",
            ),
            cur_line(
                "111",
                "Usage",
                D1,
                "arn:aws:eks:us-east-1:111:cluster/eks-other",
                2.4,
                product="AmazonEKS",
                usage_type="USE1-AmazonEKS-Hours:perCluster",
                operation="CreateOperation",
            ),
            # EKS split-cost rows are pod splits of a billed instance: never node cost.
            cur_line(
                "111",
                "Usage",
                D1,
                "arn:aws:eks:us-east-1:111:pod/eks-a/app/p1",
                1.5,
                operation="EKSPod-EC2",
            ),
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert pricing.platform_fees[
        ["cluster_id", "usage_date", "cost_family", "cost"]
    ].values.tolist() == [["eks-a", D1, "compute", 2.328]]
    assert node_cost(pricing, "n1", D1) == ("bill", 5.0)
    assert scope_of(pricing, "eks-a", D1, "compute") == pytest.approx(7.328)


def test_aws_line_item_types_and_net_fallback(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    aws_node(fleet, "eks-a", "n2", "i-n2")
    fleet.run("eks-a", "n1", D1, 24)
    fleet.run("eks-a", "n2", D1, 24)
    landing, config = fleet.write(_aws_config())
    sp = cur_line("111", "SavingsPlanCoveredUsage", D1, "i-n1", 0.0)
    sp.update(
        {
            "savings_plan_savings_plan_a_r_n": "arn:aws:savingsplans::111:savingsplan/x",
            "savings_plan_savings_plan_effective_cost": "3.50",
            "savings_plan_net_savings_plan_effective_cost": "3.20",
        }
    )
    negation = cur_line("111", "SavingsPlanNegation", D1, "i-n1", -4.6)
    edp = cur_line("111", "EdpDiscount", D1, "i-n1", -0.2)
    transfer = cur_line(
        "111",
        "Usage",
        D1,
        "i-n1",
        0.15,
        usage_type="USE1-DataTransfer-Regional-Bytes",
        operation="InterZone-In",
    )
    # No net column value: the non-net unblended cost (2 × 1.1 in cur_line's gross) is used.
    no_net = cur_line("111", "Usage", D1, "i-n2", 1.1, net=False)
    write_cur(landing, "2026-10", [sp, negation, edp, transfer, no_net])
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert node_cost(pricing, "n1", D1) == ("bill", pytest.approx(3.20))
    assert node_cost(pricing, "n2", D1) == ("bill", pytest.approx(2.2))
    # Data transfer is out of scope by default.
    assert scope_of(pricing, "eks-a", D1, "network") == 0.0
    assert pricing.network_pool.empty
    config["network"] = {"include_data_transfer": True}
    with_transfer = price_fleet(landing, config, as_of=AS_OF)
    assert scope_of(with_transfer, "eks-a", D1, "network") == pytest.approx(0.15)
    assert with_transfer.network_pool.cost.tolist() == pytest.approx([0.15])


def test_azure_scale_set_split_by_hours_over_max_of_seen_and_billed(tmp_path):
    fleet = Fleet(tmp_path)
    vmss = (
        "/subscriptions/s1/resourceGroups/MC_rg/providers/Microsoft.Compute/"
        "virtualMachineScaleSets/aks-pool-1234-vmss"
    )
    fleet.node("aks-a", "aks-pool-1234-vmss000000", f"azure://{vmss}/virtualMachines/0")
    # No provider ID: the scale set comes from the AKS node name.
    fleet.run("aks-a", "aks-pool-1234-vmss000000", D1, 24)
    fleet.run("aks-a", "aks-pool-1234-vmss000001", D1, 12)
    fleet.run("aks-a", "aks-pool-1234-vmss000000", D2, 24)
    fleet.run("aks-a", "aks-pool-1234-vmss000001", D2, 24)
    landing, config = fleet.write({"clusters": [{"id": "aks-a", "provider": "azure"}]})
    rows = [
        {
            "BillingAccountId": "ba",
            "BillingPeriodStartDate": "10/01/2026",
            "Date": date,
            "SubscriptionId": "s1",
            "ResourceId": vmss.upper() if date == "10/02/2026" else vmss,
            "MeterCategory": "Virtual Machines",
            "Quantity": qty,
            "UnitOfMeasure": "1 Hour",
            "CostInBillingCurrency": "30",
            "ChargeType": "Usage",
            "PricingModel": "OnDemand",
        }
        for date, qty in (("10/01/2026", "72"), ("10/02/2026", "24"))
    ]
    _write_csv(landing / "billing" / "azure" / "2026-10" / "cost.csv", AZURE_HEADER, rows)
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # D1: seen 24 + 12 = 36 h, billed 72 h → 30 × 24/72 = 10, 30 × 12/72 = 5; the other 15
    # are instances the agent never saw: unallocated.
    assert node_cost(pricing, "aks-pool-1234-vmss000000", D1) == ("bill", pytest.approx(10.0))
    assert node_cost(pricing, "aks-pool-1234-vmss000001", D1) == ("bill", pytest.approx(5.0))
    assert pricing.unallocated[["usage_date", "reason", "cost"]].values.tolist() == [
        [D1, "unseen_instances", pytest.approx(15.0)]
    ]
    # D2 (resource ID in upper case, matched case-insensitively): seen 48 h > billed 24 h →
    # 30 × 24/48 = 15 each, nothing left over.
    assert node_cost(pricing, "aks-pool-1234-vmss000000", D2) == ("bill", pytest.approx(15.0))
    assert node_cost(pricing, "aks-pool-1234-vmss000001", D2) == ("bill", pytest.approx(15.0))
    assert scope_of(pricing, "aks-a", D1, "compute") == 30.0


def _gcp_row(name, cost, credits, sku="N2 Instance Core running in Americas", labels=None):
    return {
        "billing_account_id": "01A-B",
        "service": {"description": "Compute Engine"},
        "sku": {"description": sku},
        "usage_start_time": "2026-10-01T00:00:00Z",
        "usage_end_time": "2026-10-02T00:00:00Z",
        "project": {"id": "proj"},
        "labels": labels or [],
        "system_labels": [],
        "location": {"region": "us-central1"},
        "resource": {"name": name, "global_name": None},
        "cost": cost,
        "currency": "USD",
        "credits": credits,
        "invoice": {"month": "202610"},
        "cost_type": "regular",
    }


def test_gcp_credits_and_commitment_fee_spread_by_cud_credits(tmp_path):
    fleet = Fleet(tmp_path)
    for node in ("g1", "g2"):
        fleet.node("gke-a", node, f"gce://proj/us-central1-a/{node}")
        fleet.run("gke-a", node, D1, 24)
    landing, config = fleet.write({"clusters": [{"id": "gke-a", "provider": "gcp"}]})

    def cud(amount):
        return {"name": "CUD", "amount": amount, "type": "COMMITTED_USAGE_DISCOUNT"}

    rows = [
        _gcp_row("projects/proj/zones/us-central1-a/instances/g1", 20.0, [cud(-6.0)]),
        _gcp_row(
            "projects/proj/zones/us-central1-a/instances/g2",
            5.0,
            [cud(-2.0), {"name": "SUD", "amount": -1.0, "type": "SUSTAINED_USAGE_DISCOUNT"}],
        ),
        _gcp_row("projects/proj/zones/us-central1-a/instances/outside", 4.0, [cud(-2.0)]),
        _gcp_row(None, 10.0, [], sku="Commitment v1: N2 Core in Americas for 1 Year"),
    ]
    path = landing / "billing" / "gcp" / "2026-10" / "export-000000000000.jsonl.gz"
    path.parent.mkdir(parents=True)
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(json.dumps(row) for row in rows) + "\n")
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # Fee 10 over CUD credits 6 : 2 : 2 → shares 6, 2, 2.
    # g1 = 20 − 6 + 6 = 20; g2 = 5 − 2 − 1 + 2 = 4; the outside instance's share is not ours.
    assert node_cost(pricing, "g1", D1) == ("bill", pytest.approx(20.0))
    assert node_cost(pricing, "g2", D1) == ("bill", pytest.approx(4.0))
    assert scope_of(pricing, "gke-a", D1, "compute") == pytest.approx(24.0)


def test_rate_card_name_over_label_first_label_in_list_order_and_effective_dates(tmp_path):
    fleet = Fleet(tmp_path)
    large = "label_node_kubernetes_io_instance_type:large|label_kubernetes_io_os:linux"
    medium = "label_node_kubernetes_io_instance_type:medium|label_kubernetes_io_os:linux"
    for day in (D2, D3):
        fleet.run("dc", "n1", day, 24, labels=large)
        fleet.run("dc", "n2", day, 24, labels=large)
        fleet.run("dc", "n3", day, 24, labels=medium)
    config = {
        "clusters": [{"id": "dc", "provider": "on_prem"}],
        "node_prices": [
            {"cluster": "dc", "node": "n1", "hourly_price": 0.9, "effective_from": "2026-10-01"}
        ],
    }
    landing, config = fleet.write(config)
    card = [
        ("label", "node.kubernetes.io/instance-type=large", "0.5", "2026-10-01"),
        ("label", "node.kubernetes.io/instance-type=large", "0.4", "2026-10-03"),
        ("label", "node.kubernetes.io/instance-type=medium", "0.3", "2026-10-03"),
        ("label", "kubernetes.io/os=linux", "0.2", "2026-10-01"),
    ]
    _write_csv(
        landing / "rate_card" / "dc.csv",
        [
            "cluster_id",
            "resource",
            "selector_type",
            "selector",
            "price",
            "unit",
            "currency",
            "effective_from",
        ],
        [
            {
                "cluster_id": "dc",
                "resource": "node",
                "selector_type": t,
                "selector": s,
                "price": p,
                "unit": "hour",
                "currency": "USD",
                "effective_from": e,
            }
            for t, s, p, e in card
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    # n1: its own name price wins over the matching labels: 24 × 0.9.
    assert node_cost(pricing, "n1", D2) == ("rate_card", pytest.approx(21.6))
    # n2: the first matching label price; its change on D3 applies from D3 on.
    assert node_cost(pricing, "n2", D2) == ("rate_card", pytest.approx(12.0))
    assert node_cost(pricing, "n2", D3) == ("rate_card", pytest.approx(9.6))
    # n3: `medium` is listed first but priced only from D3; on D2 the `linux` price applies.
    assert node_cost(pricing, "n3", D2) == ("rate_card", pytest.approx(4.8))
    assert node_cost(pricing, "n3", D3) == ("rate_card", pytest.approx(7.2))
    assert pricing.scope.empty


def test_restated_export_replaces_the_period(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    fleet.run("eks-a", "n1", dt.date(2026, 11, 1), 24)
    landing, config = fleet.write(_aws_config())
    nov = dt.date(2026, 11, 1)
    write_cur(
        landing, "2026-10/delivery-1", [cur_line("111", "Usage", D1, "i-n1", 2.4)], mtime=1_000_000
    )
    write_cur(
        landing, "2026-11/delivery-1", [cur_line("111", "Usage", nov, "i-n1", 2.4)], mtime=1_000_000
    )
    # A re-export of October, delivered later with a changed amount, replaces October only.
    write_cur(
        landing, "2026-10/delivery-2", [cur_line("111", "Usage", D1, "i-n1", 3.0)], mtime=2_000_000
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert node_cost(pricing, "n1", D1) == ("bill", 3.0)
    assert node_cost(pricing, "n1", nov) == ("bill", 2.4)
    assert scope_of(pricing, "eks-a", D1, "compute") == 3.0


def test_explicit_deliveries_replace_by_load_order_not_file_time(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    landing, config = fleet.write(_aws_config())
    write_cur(
        landing, "2026-10/zz-first", [cur_line("111", "Usage", D1, "i-n1", 2.4)], mtime=2_000_000
    )
    # Loaded after landing/, yet older by file time and by path: the load order decides.
    late = tmp_path / "late" / "2026-11-03"
    write_cur(late, "2026-10/aa-restated", [cur_line("111", "Usage", D1, "i-n1", 3.0)], 1_000_000)
    assert node_cost(price_fleet(landing, config, as_of=AS_OF), "n1", D1) == ("bill", 2.4)
    pricing = price_fleet(landing, config, as_of=AS_OF, deliveries=[late])
    assert node_cost(pricing, "n1", D1) == ("bill", 3.0)
    assert scope_of(pricing, "eks-a", D1, "compute") == 3.0
    # A second delivery replaces the first; the usage of landing/ stays.
    later = tmp_path / "late" / "2026-11-04"
    write_cur(later, "2026-10/x", [cur_line("111", "Usage", D1, "i-n1", 1.5)], 500_000)
    pricing = price_fleet(landing, config, as_of=AS_OF, deliveries=[late, later])
    assert node_cost(pricing, "n1", D1) == ("bill", 1.5)
    # Two files of one load keep both (replacement happens once per load call).
    write_cur(late, "2026-10/bb-part", [cur_line("111", "Usage", D1, "i-n1", 0.5)], 900_000)
    pricing = price_fleet(landing, config, as_of=AS_OF, deliveries=[late])
    assert node_cost(pricing, "n1", D1) == ("bill", 3.5)


def test_explicit_deliveries_replace_usage_hours_by_load_order(tmp_path):
    from tests.reference.usage import read_usage

    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    landing, config = fleet.write(_aws_config())
    write_cur(landing, "2026-10", [cur_line("111", "Usage", D1, "i-n1", 2.4)])
    # A later delivery re-sends hours 0-11 of n1 as a report of node n2 (other cores):
    # those hours of n1 are replaced, so n1 ran 12 hours and n2 12.
    redo = Fleet(tmp_path / "redo")
    redo.run("eks-a", "n2", D1, 12)
    late_landing, _ = redo.write(_aws_config())
    late = late_landing / "usage"
    usage = read_usage(landing, [late])
    hours = usage.pods.groupby("node")["hour"].nunique().to_dict()
    assert hours == {"n1": 12, "n2": 12}
    pricing = price_fleet(landing, config, as_of=AS_OF, deliveries=[late], usage=usage)
    ran = pricing.node_days.set_index("node")["hours_run"].to_dict()
    assert ran == {"n1": 12.0, "n2": 12.0}
    alone = price_fleet(landing, config, as_of=AS_OF, deliveries=[late])
    assert alone.node_days.set_index("node")["hours_run"].to_dict() == ran


def test_timestamps_with_utc_offsets_are_converted(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")

    def plus_two(start: dt.datetime) -> str:  # the same instant written at +02:00
        return (start + dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S +0200 CEST")

    # 22:00 and 23:00 UTC on D1, written as 00:00 and 01:00 on D2 at +02:00.
    fleet.run("eks-a", "n1", D1, 2, first_hour=22, stamp=plus_two)
    landing, config = fleet.write(_aws_config())
    write_cur(
        landing,
        "2026-10",
        [
            cur_line(
                "111",
                "Usage",
                D1,
                "i-n1",
                0.2,
                hours=2,
                start="2026-10-02T00:00:00+02:00",
                end="2026-10-02T02:00:00+02:00",
            ),
            cur_line(
                "111",
                "Usage",
                D1,
                "i-n1",
                0.0,
                hours=0,
                start="2026-10-01T00:00:00Z",
                end="2026-10-02T00:00:00Z",
            ),
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert pricing.node_days[["usage_date", "hours_run"]].values.tolist() == [[D1, 2.0]]
    assert node_cost(pricing, "n1", D1) == ("bill", pytest.approx(0.2))


def test_bill_without_usage_is_pending_then_no_usage(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    landing, config = fleet.write(_aws_config({"accounts": ["111"]}))
    write_cur(
        landing,
        "2026-10",
        [
            cur_line("111", "Usage", D1, "i-n1", 2.4),
            cur_line("111", "Usage", D2, "i-n1", 2.4),  # the cluster sent no usage for D2
        ],
    )
    # ruling 3e: unallocated `no_usage` at once; only the day's completeness waits (close)
    for as_of in (dt.date(2026, 10, 9), dt.date(2026, 10, 10)):
        pricing = price_fleet(landing, config, as_of=as_of)
        assert pricing.unallocated[["usage_date", "reason", "cost"]].values.tolist() == [
            [D2, "no_usage", 2.4]
        ]
    after = price_fleet(landing, config, as_of=dt.date(2026, 10, 10))
    assert scope_of(after, "eks-a", D2, "compute") == 2.4
    status = after.day_status.set_index("usage_date")
    assert not status.loc[D2, "has_usage"] and status.loc[D2, "has_billing"]


def test_rulings_fee_on_a_day_without_usage_and_no_usage_lines(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    aws_node(fleet, "eks-a", "n2", "i-n2")
    fleet.run("eks-a", "n1", D1, 24)
    fleet.run("eks-a", "n2", D2, 24)  # n2 runs on D2 only; the cluster has no usage on D3
    fleet.volume("eks-a", D1, "pv-1", "vol-1")
    landing, config = fleet.write(_aws_config({"accounts": ["111"]}))
    fee = {
        "product": "AmazonEKS",
        "usage_type": "USE1-AmazonEKS-Hours:perCluster",
        "operation": "CreateOperation",
    }
    arn = "arn:aws:eks:us-east-1:111:cluster/eks-a"
    ebs = {"usage_type": "USE1-EBS:VolumeUsage.gp3", "operation": "CreateVolume-Gp3"}
    write_cur(
        landing,
        "2026-10",
        [
            cur_line("111", "Usage", D1, "i-n1", 2.4),
            cur_line("111", "Usage", D1, "i-n2", 1.2),  # 3d: n2 billed, not reported on D1
            cur_line("111", "Usage", D2, "i-n2", 2.4),
            cur_line("111", "Usage", D3, "i-n1", 2.4),  # 3c: D3 has billing, no usage
            cur_line("111", "Usage", D3, "vol-1", 0.5, **ebs),
            cur_line("111", "Usage", D1, arn, 2.0, **fee),
            cur_line("111", "Usage", D3, arn, 2.0, **fee),  # 3b: fee on a day without usage
        ],
    )
    # ruling 3b (revised) and 3e: the fee is platform on D1 only; on D3 (billing, no usage)
    # every line of the day, the fee included, is `no_usage`, within the window and after it
    for as_of in (dt.date(2026, 10, 8), dt.date(2026, 10, 20)):
        pricing = price_fleet(landing, config, as_of=as_of)
        assert pricing.platform_fees[["usage_date", "cost"]].values.tolist() == [[D1, 2.0]]
        lost = pricing.unallocated[["usage_date", "cost_family", "resource_id", "reason", "cost"]]
        assert sorted(lost.values.tolist()) == [
            [D1, "compute", "i-n2", "no_usage", 1.2],
            [D3, "compute", arn, "no_usage", 2.0],
            [D3, "compute", "i-n1", "no_usage", 2.4],
            [D3, "storage", "vol-1", "no_usage", 0.5],
        ]
    after = price_fleet(landing, config, as_of=dt.date(2026, 10, 20))
    assert after.volume_days[after.volume_days.usage_date == D3].empty
    assert scope_of(after, "eks-a", D3, "compute") == pytest.approx(4.4)


def test_volume_matched_by_csi_handle_or_pv_name(tmp_path):
    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "n1", "i-n1")
    fleet.run("eks-a", "n1", D1, 24)
    fleet.volume("eks-a", D1, "pvc-1", "vol-1")
    fleet.volume("eks-a", D1, "pvc-2", "")
    landing, config = fleet.write(_aws_config())
    ebs = {"usage_type": "USE1-EBS:VolumeUsage.gp3", "operation": "CreateVolume-Gp3"}
    write_cur(
        landing,
        "2026-10",
        [
            cur_line("111", "Usage", D1, "vol-1", 0.5, **ebs),
            cur_line("111", "Usage", D1, "pvc-2", 0.25, **ebs),
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert pricing.volume_days[["pv_name", "resource_id", "volume_cost"]].values.tolist() == [
        ["pvc-1", "vol-1", 0.5],
        ["pvc-2", "pvc-2", 0.25],
    ]


def test_legacy_cur_gcp_parquet_and_focus_formats(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    fleet = Fleet(tmp_path)
    aws_node(fleet, "eks-a", "a1", "i-a1")
    fleet.run("eks-a", "a1", D1, 24)
    fleet.node("gke-a", "g1", "gce://proj/us-central1-a/g1")
    fleet.run("gke-a", "g1", D1, 24)
    fleet.node("fx", "f1", "aws:///us-east-1a/i-f1")
    fleet.run("fx", "f1", D1, 24)
    config = {
        "clusters": [
            {
                "id": "eks-a",
                "provider": "aws",
                "billing_link": {"tags": ["kubernetes.io/cluster/eks-a"]},
            },
            {"id": "gke-a", "provider": "gcp"},
            {"id": "fx", "provider": "focus"},
        ]
    }
    landing, config = fleet.write(config)
    legacy = [
        "bill/PayerAccountId",
        "bill/BillingPeriodStartDate",
        "lineItem/UsageAccountId",
        "lineItem/LineItemType",
        "lineItem/UsageStartDate",
        "lineItem/UsageEndDate",
        "lineItem/ProductCode",
        "lineItem/UsageType",
        "lineItem/Operation",
        "lineItem/ResourceId",
        "lineItem/UsageAmount",
        "lineItem/UnblendedCost",
        "resourceTags/user:kubernetes.io/cluster/eks-a",
    ]
    base = {
        "bill/PayerAccountId": "111",
        "bill/BillingPeriodStartDate": "2026-10-01T00:00:00Z",
        "lineItem/UsageAccountId": "111",
        "lineItem/LineItemType": "Usage",
        "lineItem/UsageStartDate": "2026-10-01T00:00:00Z",
        "lineItem/UsageEndDate": "2026-10-02T00:00:00Z",
        "lineItem/ProductCode": "AmazonEC2",
    }
    _write_csv(
        landing / "billing" / "aws" / "2026-10" / "legacy.csv",
        legacy,
        [
            # No net columns in this export: the unblended cost is the net amortized cost.
            {
                **base,
                "lineItem/UsageType": "USE1-BoxUsage:m5.large",
                "lineItem/Operation": "RunInstances",
                "lineItem/ResourceId": "i-a1",
                "lineItem/UsageAmount": "24",
                "lineItem/UnblendedCost": "2.40",
            },
            {
                **base,
                "lineItem/UsageType": "USE1-EBS:VolumeUsage.gp3",
                "lineItem/Operation": "CreateVolume-Gp3",
                "lineItem/ResourceId": "vol-orphan",
                "lineItem/UsageAmount": "1",
                "lineItem/UnblendedCost": "0.50",
                "resourceTags/user:kubernetes.io/cluster/eks-a": "owned",
            },
        ],
    )
    row = _gcp_row(
        "projects/proj/zones/us-central1-a/instances/g1",
        3.0,
        [
            {
                "name": "SUD",
                "amount": -0.5,
                "type": "SUSTAINED_USAGE_DISCOUNT",
                "full_name": None,
                "id": "x",
            }
        ],
    )
    row["usage_start_time"] = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    row["usage_end_time"] = dt.datetime(2026, 10, 2, tzinfo=dt.UTC)
    path = landing / "billing" / "gcp" / "2026-10" / "export.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([row]), path)
    focus = [
        "BillingAccountId",
        "ChargePeriodStart",
        "ChargePeriodEnd",
        "ChargeCategory",
        "BilledCost",
        "EffectiveCost",
        "BillingCurrency",
        "ResourceId",
        "ServiceCategory",
        "ResourceType",
    ]
    _write_csv(
        landing / "billing" / "focus" / "focus.csv",
        focus,
        [
            {
                "BillingAccountId": "999",
                "ChargePeriodStart": "2026-10-01T00:00:00Z",
                "ChargePeriodEnd": "2026-10-02T00:00:00Z",
                "ChargeCategory": "Usage",
                "BilledCost": "2.0",
                "EffectiveCost": "1.75",
                "BillingCurrency": "USD",
                "ResourceId": "i-f1",
                "ServiceCategory": "Compute",
                "ResourceType": "Instance",
            },
            {
                "BillingAccountId": "999",
                "ChargePeriodStart": "2026-10-01T00:00:00Z",
                "ChargePeriodEnd": "2026-11-01T00:00:00Z",
                "ChargeCategory": "Tax",
                "BilledCost": "5.0",
                "EffectiveCost": "5.0",
                "BillingCurrency": "USD",
                "ResourceId": "",
                "ServiceCategory": "",
                "ResourceType": "",
            },
        ],
    )
    pricing = price_fleet(landing, config, as_of=AS_OF)
    assert node_cost(pricing, "a1", D1) == ("bill", pytest.approx(2.4))
    assert node_cost(pricing, "g1", D1) == ("bill", pytest.approx(2.5))  # 3.00 − 0.50 credit
    assert node_cost(pricing, "f1", D1) == ("bill", pytest.approx(1.75))  # EffectiveCost
    assert pricing.unallocated[["cluster_id", "resource_id", "cost"]].values.tolist() == [
        ["eks-a", "vol-orphan", 0.5]
    ]
    assert scope_of(pricing, "fx", D1, "compute") == pytest.approx(1.75)
