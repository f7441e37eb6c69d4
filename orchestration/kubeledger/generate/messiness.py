"""The irregularities of a production fleet, one switch each (issue 12 §2).

`Messiness.all()` is the default of `generate_fleet` (and so of `make demo`);
`Messiness.none()` gives the tidy fleet of earlier versions; `Messiness.random(rng)` is what
the differential test draws per fleet. An irregularity that does not fit the fleet (a
weekend or the 20th outside its days, no cluster of the kind it needs) is skipped, and the
summary says which ones were applied.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class Messiness:
    # AKS: three LoadBalancer Services report the one `kubernetes` load balancer.
    shared_load_balancer: bool = True
    # One cluster has no nodes (and no agent reports) on a Saturday and Sunday.
    scale_to_zero_weekend: bool = True
    # One cluster's last node leaves on the 20th of the first month.
    decommissioned_cluster: bool = True
    # New nodes on the days the bills do not cover yet, in pools whose peers are billed.
    autoscaled_unbilled_nodes: bool = True
    # A re-export of the first closed AWS month, delivered after month end, other amounts.
    restated_cur: bool = True
    # EKS control-plane fee rows as AWS writes them: the cluster ARN, no cluster tag.
    real_eks_fee_rows: bool = True
    # Timestamps written with non-zero UTC offsets where the format carries offsets.
    offset_timestamps: bool = True
    # A node billed on a day the agent reported nothing for it, and a cluster-day with a
    # bill but no reports at all (the agent was down).
    bill_days_without_usage: bool = True
    # Selector mappings on aliased keys (`app.kubernetes.io/name`, `squad`), one `notin`.
    aliased_selector_mappings: bool = True
    # A nightly job whose memory goes far over its request: memory over-commit.
    memory_bursts: bool = True
    # A namespace mapping on a namespace whose pods carry their own team labels.
    namespace_mapping_under_labels: bool = True
    # EKS GPU node pools: whole GPUs and a time-shared one on one node, MIG slices on another,
    # with the operator's GPU report.
    gpu_pools: bool = True
    # A claim deleted on the 10th whose volume is kept (reclaim policy Retain) and still
    # billed: the cluster reported the volume before, so it is unattributed storage after.
    released_volume: bool = True

    @classmethod
    def all(cls) -> Messiness:
        return cls()

    @classmethod
    def none(cls) -> Messiness:
        return cls(**{f.name: False for f in fields(cls)})

    @classmethod
    def random(cls, rng: random.Random, p: float = 0.5) -> Messiness:
        """Each switch on with probability `p`, drawn in field order from `rng`."""
        return cls(**{f.name: rng.random() < p for f in fields(cls)})

    def on(self) -> list[str]:
        """The names of the switches that are on, in field order."""
        return [name for name, value in asdict(self).items() if value]

    @property
    def any(self) -> bool:
        return bool(self.on())
