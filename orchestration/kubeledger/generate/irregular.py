"""Where each switched-on irregularity of a fleet goes (cluster, day), decided before any
node exists: the fleet model and every writer read the plan."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubeledger.generate.fleet import Cluster, Params


@dataclass
class Irregularities:
    """Which irregularities of `Params.messiness` this fleet got, and where (day indices)."""

    scale_to_zero: tuple[str, tuple[int, int]] | None = None  # cluster, (Saturday, Sunday)
    decommissioned: tuple[str, int] | None = None  # cluster, the day its last node leaves
    outage: tuple[str, int] | None = None  # cluster-day billed with no agent reports
    silent_node: tuple[str, str, int] | None = None  # cluster, node, day: billed, not reported
    shared_load_balancer: str | None = None  # the AKS cluster whose Services share its LB
    restated_month: dt.date | None = None  # first day of the AWS month re-exported
    autoscaled: list[str] = field(default_factory=list)  # node names
    gpu_nodes: list[str] = field(default_factory=list)  # the GPU pools' nodes
    # cluster, claim (set with the claims), the first day no claim holds the claim's volume
    released_volume: tuple[str, str, int] | None = None

    def silent_days(self, cluster_id: str) -> set[int]:
        """Days with no agent reports at all for the cluster."""
        days: set[int] = set()
        if self.scale_to_zero and self.scale_to_zero[0] == cluster_id:
            days |= set(self.scale_to_zero[1])
        if self.outage and self.outage[0] == cluster_id:
            days.add(self.outage[1])
        return days

    def summary(self) -> dict:
        return {
            "scale_to_zero": self.scale_to_zero
            and [self.scale_to_zero[0], list(self.scale_to_zero[1])],
            "decommissioned": self.decommissioned and list(self.decommissioned),
            "outage": self.outage and list(self.outage),
            "silent_node": self.silent_node and list(self.silent_node),
            "shared_load_balancer": self.shared_load_balancer,
            "restated_month": self.restated_month and self.restated_month.isoformat(),
            "autoscaled_nodes": list(self.autoscaled),
            "gpu_nodes": list(self.gpu_nodes),
            "released_volume": self.released_volume and list(self.released_volume),
        }


def _first_of(clusters: list[Cluster], kinds: tuple[str, ...], taken: set[str]) -> Cluster | None:
    for kind in kinds:
        for cluster in clusters:
            if cluster.kind == kind and cluster.cluster_id not in taken:
                return cluster
    return None


def plan_irregularities(params: Params, clusters: list[Cluster]) -> Irregularities:
    """Where each switched-on irregularity goes; those that do not fit the fleet are skipped.

    Scale to zero: the first GKE cluster (else EKS, AKS) on the second weekend, when the
    weekend and the Monday after are billed. Decommissioned: the first AKS cluster (else the
    last other cloud cluster) on the 20th of the first month, when that day is billed. The
    agent outage: the first EKS cluster on day 14; the silent node: the first GKE cluster on
    day 17 (else the next cloud cluster). The restated month: the first fully billed month.
    The released volume: the first cloud cluster (EKS, else AKS, GKE) not decommissioned, from
    the 10th of the first month, when that day is billed; its claim is picked with the claims.
    """
    mess = params.messiness
    plan = Irregularities()
    last_billed = params.last_billed_index
    taken: set[str] = set()
    if mess.scale_to_zero_weekend:
        saturday = next((d for d in range(7, params.days) if params.day(d).weekday() == 5), None)
        target = _first_of(clusters, ("gke", "eks", "aks"), taken)
        if saturday is not None and saturday + 2 <= last_billed and target:
            plan.scale_to_zero = (target.cluster_id, (saturday, saturday + 1))
            taken.add(target.cluster_id)
    if mess.decommissioned_cluster:
        day = (params.start_date.replace(day=20) - params.start_date).days
        target = _first_of(clusters, ("aks",), taken) or _first_of(
            list(reversed(clusters)), ("eks", "gke", "aks"), taken
        )
        others = [c for c in clusters if c.provider != "on_prem" and c is not target]
        if 0 < day <= last_billed and target and others:
            plan.decommissioned = (target.cluster_id, day)
            taken.add(target.cluster_id)
    if mess.bill_days_without_usage:
        outage_day, node_day = 13, 16
        target = _first_of(clusters, ("eks", "gke", "aks"), taken)
        if target and outage_day <= last_billed:
            plan.outage = (target.cluster_id, outage_day)
        decommissioned = {plan.decommissioned[0]} if plan.decommissioned else set()
        target = _first_of(clusters, ("gke", "aks", "eks"), decommissioned)
        if target and node_day <= last_billed:
            plan.silent_node = (target.cluster_id, "", node_day)
    if mess.shared_load_balancer:
        target = _first_of(clusters, ("aks",), set())
        plan.shared_load_balancer = target.cluster_id if target else None
    if mess.released_volume:
        day = (params.start_date.replace(day=10) - params.start_date).days
        decommissioned = {plan.decommissioned[0]} if plan.decommissioned else set()
        target = _first_of(clusters, ("eks", "aks", "gke"), decommissioned)
        if 0 < day <= last_billed and target:
            plan.released_volume = (target.cluster_id, "", day)
    if mess.restated_cur and any(c.provider == "aws" for c in clusters):
        plan.restated_month = next(
            (first for first, _following, complete in params.billed_months() if complete), None
        )
    return plan
