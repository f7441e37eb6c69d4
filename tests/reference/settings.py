"""The reference's reading of kubeledger.yml: every default from README's kubeledger.yml section
(SPEC §3.3 says every setting has a documented default; README documents them)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

POOLS = [
    "platform",
    "infrastructure_idle",
    "workload_idle",
    "unattributed_storage",
    "unattributed_network",
]
DEFAULT_PLATFORM_NAMESPACES = [
    "kube-system",
    "monitoring",
    "ingress-nginx",
    "cert-manager",
    "istio-system",
    "logging",
]
DEFAULT_PLATFORM_PREFIXES = ["kube-", "openshift-"]


@dataclass(frozen=True)
class PoolRule:
    rule: str  # owner, keep, separate, proportional, even, fixed
    basis: str = "direct"  # direct, cpu, memory, storage, network
    hybrid_share: float = 0.0  # percent kept by the platform owner
    scope: str = "cluster"  # node, cluster, fleet
    # SPEC §7: receivers include unowned cost as its own receiver; platform usage counting in
    # the basis is an option, SPEC silent on its default: off (platform cost is a pool).
    include_unowned: bool = True
    include_platform: bool = False
    shares: tuple[tuple[str | None, str | None, str | None, float], ...] = ()


# SPEC §7 presets. SPEC silent on what each preset does to each pool; README (the config
# tables' defaults and "Presets: ...") says: platform_absorbs keeps platform, infrastructure
# idle and the unattributed pools with the platform owner and leaves workload idle with its
# owner; proportional spreads them by direct cost; hybrid keeps `hybrid_share` % and spreads
# the rest; the user-projects modes spread them over user owners proportionally or evenly.
# Workload idle stays `owner` in every preset (SPEC: `owner` is its default).
def preset_rules(preset: str, hybrid_share: float) -> dict[str, PoolRule]:
    shared = [p for p in POOLS if p != "workload_idle"]
    if preset == "platform_absorbs":
        rule = PoolRule("keep")
    elif preset == "proportional":
        rule = PoolRule("proportional")
    elif preset == "hybrid":
        rule = PoolRule("proportional", hybrid_share=float(hybrid_share))
    elif preset == "user_projects_proportional":
        rule = PoolRule("proportional", include_unowned=True)
    elif preset == "user_projects_even":
        rule = PoolRule("even")
    else:
        raise ValueError(f"distribution.preset: unknown preset {preset!r}")
    rules = {pool: rule for pool in shared}
    rules["workload_idle"] = PoolRule("owner")
    return rules


def _override(base: PoolRule, spec) -> PoolRule:
    if isinstance(spec, str):
        spec = {"rule": spec}
    shares = base.shares
    if "shares" in spec:
        shares = tuple(
            (s.get("team"), s.get("cost_center"), s.get("application"), float(s["percent"]))
            for s in spec["shares"]
        )
        total = sum(s[3] for s in shares)
        if abs(total - 100) > 1e-9:
            raise ValueError(f"fixed shares sum to {total}, not 100")
    rule = spec.get("rule", base.rule)
    return PoolRule(
        rule=rule,
        basis=spec.get("basis", base.basis),
        hybrid_share=float(spec.get("hybrid_share", base.hybrid_share if rule == base.rule else 0)),
        scope=spec.get("scope", base.scope),
        include_unowned=bool(spec.get("include_unowned", base.include_unowned)),
        include_platform=bool(spec.get("include_platform", base.include_platform)),
        shares=shares,
    )


def _date(value) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


@dataclass
class Settings:
    raw: dict
    cpu_weight: float = 0.5
    memory_weight: float = 0.5
    platform_namespaces: list[str] = field(default_factory=list)
    platform_prefixes: list[str] = field(default_factory=list)
    platform_team: str = "platform"
    platform_cost_center: str = "platform"
    clusters: dict[str, dict] = field(default_factory=dict)
    grace_days: int = 4
    deadline_days: int = 10
    factor_min: float = 0.2
    factor_max: float = 5.0
    unassigned_policy: str = "separate"
    line_grain: str = "cost_center"
    repair_window_days: int = 7
    include_data_transfer: bool = False
    selector_mappings: list[dict] = field(default_factory=list)
    namespace_mappings: list[dict] = field(default_factory=list)
    distribution: dict = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: dict | None) -> Settings:
        config = config or {}
        pricing = config.get("pricing") or {}
        platform = config.get("platform") or {}
        owner = platform.get("owner") or {}
        close = config.get("close") or {}
        bounds = close.get("factor_bounds") or [0.2, 5.0]
        ownership = config.get("ownership") or {}
        settings = cls(
            raw=config,
            cpu_weight=float(pricing.get("cpu_cost_weight", 0.5)),
            memory_weight=float(pricing.get("memory_cost_weight", 0.5)),
            platform_namespaces=list(platform.get("namespaces", DEFAULT_PLATFORM_NAMESPACES)),
            platform_prefixes=list(platform.get("namespace_prefixes", DEFAULT_PLATFORM_PREFIXES)),
            platform_team=owner.get("team", "platform"),
            platform_cost_center=owner.get("cost_center", "platform"),
            clusters={c["id"]: c for c in config.get("clusters") or []},
            grace_days=int(close.get("grace_days", 4)),
            deadline_days=int(close.get("deadline_days", 10)),
            factor_min=float(bounds[0]),
            factor_max=float(bounds[1]),
            unassigned_policy=close.get("unassigned_policy", "separate"),
            line_grain=close.get("line_grain", "cost_center"),
            repair_window_days=int((config.get("reruns") or {}).get("repair_window_days", 7)),
            include_data_transfer=bool(
                (config.get("network") or {}).get("include_data_transfer", False)
            ),
            selector_mappings=[
                {**m, "effective_from": _date(m.get("effective_from"))}
                for m in ownership.get("selector_mappings") or []
            ],
            namespace_mappings=[
                {**m, "effective_from": _date(m.get("effective_from"))}
                for m in ownership.get("namespace_mappings") or []
            ],
            distribution=config.get("distribution") or {},
        )
        if abs(settings.cpu_weight + settings.memory_weight - 1) > 1e-9:
            raise ValueError("pricing.cpu_cost_weight + memory_cost_weight must sum to 1")
        return settings

    def is_platform_namespace(self, namespace: str) -> bool:
        return namespace in self.platform_namespaces or any(
            namespace.startswith(prefix) for prefix in self.platform_prefixes
        )

    def cluster_default(self, cluster_id: str, dimension: str) -> str | None:
        defaults = (self.clusters.get(cluster_id) or {}).get("defaults") or {}
        return defaults.get(dimension)

    def has_billing_link(self, cluster_id: str) -> bool:
        return bool((self.clusters.get(cluster_id) or {}).get("billing_link"))

    def pool_rules(self, cluster_id: str) -> dict[str, PoolRule]:
        """The preset, then the fleet's per-pool overrides, then the cluster's own."""
        distribution = self.distribution
        own = (distribution.get("clusters") or {}).get(cluster_id) or {}
        preset = own.get("preset", distribution.get("preset", "platform_absorbs"))
        hybrid = own.get("hybrid_share", distribution.get("hybrid_share", 30))
        rules = preset_rules(preset, hybrid)
        # docs/config-tables.md: a cluster's row overrides the fleet's (`*`) row of a pool, so
        # a cluster's own preset replaces the fleet's pools too; its own pools come last.
        sources = [own.get("pools") or {}]
        if "preset" not in own:
            sources.insert(0, distribution.get("pools") or {})
        for source in sources:
            for pool, spec in source.items():
                rules[pool] = _override(rules[pool], spec)
        return rules
