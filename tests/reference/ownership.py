"""Ownership (SPEC §6): workloads from owner references, and team / cost center / application
per pod-day by the first rule that gives a value."""

from __future__ import annotations

import re

import pandas as pd

from tests.reference.labels import (
    KeyRule,
    looks_generated,
    parse_labels,
    parse_selector,
    selector_matches,
)
from tests.reference.settings import Settings

DIMENSIONS = ["team", "cost_center", "application"]
LABEL_KEYS = {
    "team": ["team", "owner", "project"],
    "cost_center": ["cost_center", "dept", "department"],
    "application": ["app", "application", "product"],
}
UNOWNED = "unallocated"  # SPEC §6 rule 5: unowned shows as `unallocated` in owner columns
# SPEC silent on the `<dimension>_source` vocabulary; README names the rules: label selector
# mapping, the workload's own labels, namespace mapping, namespace labels, cluster default.
SOURCES = {
    1: "selector_mapping",
    2: "workload_label",
    3: "namespace_mapping",
    4: "namespace_label",
    5: "cluster_default",
    6: "none",
}


def workloads(pods: pd.DataFrame, owners: pd.DataFrame) -> pd.DataFrame:
    """cluster_id, namespace, pod -> workload_kind, workload_name, workload_source."""
    keys = pods[["cluster_id", "namespace", "pod"]].drop_duplicates()
    if keys.empty:
        return keys.assign(workload_kind="", workload_name="", workload_source="")
    owner_of = {
        (row.cluster_id, row.namespace, row.kind, row.name): (row.owner_kind, row.owner_name)
        for row in owners.sort_values(list(owners.columns)).itertuples(index=False)
    }
    kinds, names, sources = [], [], []
    for cluster, namespace, pod in keys.itertuples(index=False):
        owner = owner_of.get((cluster, namespace, "Pod", pod))
        if owner is None:
            kind, name = _from_pod_name(pod)
            source = "pod_name_fallback" if kind != "Pod" else "bare_pod"
        else:
            kind, name = owner
            source = "owner_reference"
            if kind == "Node":  # a static control-plane pod keeps its own name
                kind, name = "StaticPod", pod
            elif kind in ("ReplicaSet", "Job"):
                parent = owner_of.get((cluster, namespace, kind, name))
                if parent is not None and parent[0] in ("Deployment", "CronJob"):
                    kind, name = parent
        kinds.append(kind)
        names.append(name)
        sources.append(source)
    return keys.assign(workload_kind=kinds, workload_name=names, workload_source=sources)


# Kubernetes' generated name suffixes use the alphabet of its rand.String (no vowels, no 0/1/3)
_SAFE = "[bcdfghjklmnpqrstvwxz2456789]"
_DEPLOYMENT_POD = re.compile(rf"^(.+)-{_SAFE}{{6,10}}-{_SAFE}{{5}}$")
_STATEFUL_POD = re.compile(r"^(.+)-[0-9]+$")
_DAEMON_POD = re.compile(rf"^(.+)-{_SAFE}{{5}}$")


def _from_pod_name(pod: str) -> tuple[str, str]:
    # SPEC: "fall back to parsing the pod name"; the forms are Kubernetes' own naming of
    # Deployment (<name>-<template hash>-<5>), StatefulSet (<name>-<ordinal>) and DaemonSet /
    # Job (<name>-<5>) pods; anything else is a bare pod with its own name.
    if match := _DEPLOYMENT_POD.match(pod):
        return "Deployment", match.group(1)
    if match := _STATEFUL_POD.match(pod):
        return "StatefulSet", match.group(1)
    if match := _DAEMON_POD.match(pod):
        return "DaemonSet", match.group(1)
    return "Pod", pod


def last_hour_labels(frame: pd.DataFrame, keys: list[str], column: str) -> pd.DataFrame:
    """The labels of each key's last hour of the day (SPEC §6)."""
    frame = frame.assign(usage_date=frame["hour"].dt.date)
    order = [*keys, "usage_date", "hour"]
    extra = [c for c in ("node",) if c in frame and c not in keys]
    frame = frame.sort_values([*order, *extra, column])
    return frame.drop_duplicates([*keys, "usage_date"], keep="last")[[*keys, "usage_date", column]]


class Resolver:
    def __init__(self, settings: Settings, rule: KeyRule):
        self.settings = settings
        self.rule = rule
        self.selectors = [
            (
                m.get("cluster") or m.get("cluster_id"),
                m.get("effective_from"),
                parse_selector(str(m["selector"]), rule),
                {d: m.get(d) for d in DIMENSIONS},
            )
            for m in settings.selector_mappings
        ]
        self.namespaces = [
            (
                m.get("cluster") or m.get("cluster_id"),
                m.get("effective_from"),
                m["namespace"],
                {d: m.get(d) for d in DIMENSIONS},
            )
            for m in settings.namespace_mappings
        ]
        self._cache: dict = {}

    def resolve(self, cluster, usage_date, namespace, pod_labels_text, ns_labels_text, has_pod):
        active_selectors = tuple(
            i
            for i, (c, since, _, _) in enumerate(self.selectors)
            if (c is None or c == cluster) and (since is None or since <= usage_date)
        )
        active_namespaces = tuple(
            i
            for i, (c, since, ns, _) in enumerate(self.namespaces)
            if ns == namespace
            and (c is None or c == cluster)
            and (since is None or since <= usage_date)
        )
        key = (cluster, namespace, pod_labels_text, ns_labels_text, has_pod)
        key = (*key, active_selectors, active_namespaces)
        if key not in self._cache:
            self._cache[key] = self._resolve(
                cluster,
                pod_labels_text,
                ns_labels_text,
                has_pod,
                active_selectors,
                active_namespaces,
            )
        return self._cache[key]

    def _resolve(self, cluster, pod_text, ns_text, has_pod, selectors, namespaces):
        labels = parse_labels(pod_text, self.rule) if has_pod else {}
        ns_labels = parse_labels(ns_text, self.rule)
        out = {}
        for dimension in DIMENSIONS:
            value, source = self._dimension(
                dimension, cluster, labels, ns_labels, has_pod, selectors, namespaces
            )
            out[dimension] = value
            out[f"{dimension}_source"] = source
        return out

    def _dimension(self, dimension, cluster, labels, ns_labels, has_pod, selectors, namespaces):
        # SPEC silent on whether selectors apply to namespace-level cost (a volume nobody
        # mounted, a load balancer); it has no pod labels, so rule 1 and 2 are skipped for it.
        if has_pod:
            for index in selectors:
                _, _, requirements, values = self.selectors[index]
                if values.get(dimension) and selector_matches(requirements, labels):
                    return values[dimension], SOURCES[1]
            for key in LABEL_KEYS[dimension]:
                value = labels.get(key)
                if value and not looks_generated(value):
                    return value, SOURCES[2]
        for index in namespaces:
            values = self.namespaces[index][3]
            if values.get(dimension):
                return values[dimension], SOURCES[3]
        for key in LABEL_KEYS[dimension]:
            value = ns_labels.get(key)
            if value and not looks_generated(value):
                return value, SOURCES[4]
        default = self.settings.cluster_default(cluster, dimension)
        if default:
            return default, SOURCES[5]
        return UNOWNED, SOURCES[6]


def resolve_owners(
    owned: pd.DataFrame, namespace_labels: pd.DataFrame, settings: Settings, rule: KeyRule
) -> pd.DataFrame:
    """owned: cluster_id, usage_date, namespace, pod (None: namespace-level), pod_labels.
    Adds team, cost_center, application and their _source columns."""
    ns = last_hour_labels(namespace_labels, ["cluster_id", "namespace"], "namespace_labels")
    owned = owned.merge(ns, on=["cluster_id", "usage_date", "namespace"], how="left")
    owned["namespace_labels"] = owned["namespace_labels"].fillna("")
    resolver = Resolver(settings, rule)
    rows = [
        resolver.resolve(c, d, n, p or "", nl, pod is not None)
        for c, d, n, pod, p, nl in zip(
            owned["cluster_id"],
            owned["usage_date"],
            owned["namespace"],
            owned["pod"],
            owned["pod_labels"],
            owned["namespace_labels"],
            strict=True,
        )
    ]
    resolved = pd.DataFrame(rows, index=owned.index)
    return pd.concat([owned.drop(columns=["namespace_labels"]), resolved], axis=1)
