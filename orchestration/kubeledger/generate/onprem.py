"""The rate card of each on-prem cluster: node prices by name and by label, in list order,
one of them changing on the 16th of the first month."""

from __future__ import annotations

import datetime as dt

from kubeledger.generate.context import Context, sql_str
from kubeledger.generate.fleet import Cluster

COLUMNS = (
    "cluster_id",
    "resource",
    "selector_type",
    "selector",
    "price",
    "unit",
    "currency",
    "effective_from",
)


def rate_card_rows(cluster: Cluster, start: dt.date) -> list[tuple]:
    dc = cluster.datacenter
    first = start.replace(day=1)
    change = first.replace(day=16)
    rows = [
        ("node", "node", f"{dc}-cp-01", "1.20", "hour", first),
        ("node", "node", f"{dc}-node-01", "0.99", "hour", first),
        ("node", "label", "node.kubernetes.io/instance-type=metal-large", "0.90", "hour", first),
        ("node", "label", "node.kubernetes.io/instance-type=metal-large", "0.80", "hour", change),
        ("node", "label", "node.kubernetes.io/instance-type=metal-small", "0.45", "hour", first),
        ("node", "label", "kubernetes.io/os=linux", "0.60", "hour", first),
        ("volume", "label", "storage-tier=ceph-ssd", "0.06", "gib_month", first),
    ]
    return [
        (cluster.cluster_id, resource, kind, selector, price, unit, "USD", effective.isoformat())
        for resource, kind, selector, price, unit, effective in rows
    ]


def write_rate_cards(ctx: Context) -> None:
    for cluster in ctx.fleet.clusters:
        if cluster.provider != "on_prem":
            continue
        rows = rate_card_rows(cluster, ctx.fleet.params.start_date)
        values = ",\n".join(
            "(" + ", ".join(sql_str(str(v)) for v in row) + f", {n})" for n, row in enumerate(rows)
        )
        query = f"""
            select {", ".join(COLUMNS)}
            from (values {values}) as card({", ".join(COLUMNS)}, position)
            order by position
        """
        path = ctx.landing / "rate_card" / f"{cluster.cluster_id}.csv"
        ctx.copy(query, path, "rate_card")
