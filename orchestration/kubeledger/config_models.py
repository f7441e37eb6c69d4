"""kubeledger.yml described once, as pydantic models: every setting's default, description
and check in one place (kubeledger.config turns them into the config tables and publishes their
JSON Schema). To add a setting, give its section's model a field (type, default, description).
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from kubeledger.config_allocations import CloudCharges
from kubeledger.config_base import (
    BEGINNING_DAY,
    Day,
    IdText,
    Section,
    choice,
    number,
    problems,
    raise_problems,
    whole,
)
from kubeledger.config_budgets import Budgets
from kubeledger.config_gpu import Gpu
from kubeledger.config_selectors import parse_selector

PROVIDERS = ("aws", "gcp", "azure", "focus", "on_prem")
POOLS = (
    "platform",
    "infrastructure_idle",
    "workload_idle",
    "unattributed_storage",
    "unattributed_network",
)
RULES = ("owner", "keep", "separate", "proportional", "even", "fixed")
BASES = ("direct", "cpu", "memory", "storage", "network")
SCOPES = ("node", "cluster", "fleet")
PRESETS = (
    "platform_absorbs",
    "proportional",
    "hybrid",
    "user_projects_proportional",
    "user_projects_even",
)


# --- value types ------------------------------------------------------------------------------


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regex ({exc})") from None
    return pattern


def _eks_arn(arn: str) -> str:
    if not re.fullmatch(r"arn:aws[a-z-]*:eks:[a-z0-9-]+:[0-9]{12}:cluster/[^/\s]+", arn):
        raise ValueError(
            f"{arn!r} is no EKS cluster ARN "
            "(expected arn:aws:eks:<region>:<account>:cluster/<name>)"
        )
    return arn


def _selector(text: Any) -> Any:
    parse_selector(text)
    return text


CURRENCY_CODE_RE = re.compile(r"^[A-Z]{3}$")
# A rate is stored as decimal(14, 8) (docs/config-tables.md): up to 8 places, below 10^6.
RATE_PLACES = 8
RATE_LIMIT = decimal.Decimal(10) ** 6


def _currency_code(value: Any) -> str:
    if not isinstance(value, str) or not CURRENCY_CODE_RE.match(value):
        raise ValueError(f"{value!r} is not an ISO 4217 code (three upper-case letters)")
    return value


def _rate(value: Any) -> decimal.Decimal:
    """A positive exchange rate, exact: YAML's 1.08 is read from its text, never as a double."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | decimal.Decimal):
        raise ValueError(f"expected a number, got {value!r}")
    try:
        rate = decimal.Decimal(str(value).strip())
    except decimal.InvalidOperation:
        raise ValueError(f"expected a number, got {value!r}") from None
    if not rate.is_finite() or rate <= 0:
        raise ValueError(f"{value!r} must be a positive number")
    if rate >= RATE_LIMIT or rate != round(rate, RATE_PLACES):
        raise ValueError(
            f"{value!r} must be below {RATE_LIMIT:,} with at most {RATE_PLACES} decimal places"
        )
    return rate


def _rule_shorthand(value: Any) -> Any:
    return {"rule": value} if isinstance(value, str) else value


Regex = Annotated[str, AfterValidator(_regex)]
EksArn = Annotated[str, AfterValidator(_eks_arn)]
Selector = Annotated[str, BeforeValidator(_selector)]
CurrencyCode = Annotated[str, BeforeValidator(_currency_code), Field(pattern=r"^[A-Z]{3}$")]
Rate = Annotated[decimal.Decimal, BeforeValidator(_rate), Field(gt=0, lt=RATE_LIMIT)]
Weight = number(0, 1)
Percent = number(0, 100)
Effective = Annotated[Day, Field(description="First day this applies (YYYY-MM-DD)")]


# --- sections ---------------------------------------------------------------------------------


class Owner(Section):
    team: str | None = Field(None, description="Team (SPEC §6)")
    cost_center: str | None = Field(None, description="Cost center")
    application: str | None = Field(None, description="Application")


class BillingLink(Section):
    """What picks the cluster's lines on its cloud bill (SPEC §3.3): accounts only restrict,
    tags and patterns select."""

    accounts: list[IdText] = Field(default_factory=list, description="Billing account IDs")
    tags: list[str] = Field(
        default_factory=list, description='Tags that select lines: "key" or "key=value"'
    )
    resource_id_patterns: list[Regex] = Field(
        default_factory=list, description="Regexes on resource IDs, case-insensitive"
    )
    cluster_arn: EksArn | None = Field(
        None, description="The EKS cluster ARN its control-plane fee rows carry"
    )

    @model_validator(mode="after")
    def _selects_something(self) -> BillingLink:
        if not (self.accounts or self.tags or self.resource_id_patterns):
            raise ValueError("give at least one of accounts, tags, resource_id_patterns")
        return self


class Cluster(Section):
    id: str = Field(description="The cluster ID the agent reports")
    provider: choice(*PROVIDERS) = Field(description="Where its bill comes from")
    billing_link: BillingLink | None = Field(
        None, description="Omitted: the cluster is priced from the rate card or estimated"
    )
    defaults: Owner = Field(default_factory=Owner, description="Owner rule 4: cluster default")
    currency: str | None = Field(None, description="Default: the file's `currency`")


class Pricing(Section):
    cpu_cost_weight: Weight = Field(0.5, description="CPU's part of a node's cost (SPEC §5)")
    memory_cost_weight: Weight = Field(0.5, description="Memory's part; the two sum to 1")
    estimate_lookback_days: whole(low=1) = Field(
        7, description="Days of peers' rates an estimate reads"
    )

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Pricing:
        if round(self.cpu_cost_weight + self.memory_cost_weight, 9) != 1:
            raise ValueError(
                problems(
                    [
                        (
                            "cpu_cost_weight",
                            "cpu_cost_weight + memory_cost_weight must sum to 1 "
                            f"(got {self.cpu_cost_weight} + {self.memory_cost_weight})",
                        )
                    ]
                )
            )
        return self


class NodePrice(Section):
    """A rate-card price for clusters without a cloud bill: by node name or by node label."""

    cluster: str = Field(description="The cluster ID this price is for")
    node: IdText | None = Field(None, description="A node name (wins over labels)")
    label: str | None = Field(None, description="key=value")
    resource: choice("node", "volume", "load_balancer") = Field(
        "node", description="What is priced: nodes, volumes or load balancers"
    )
    hourly_price: number(low=0) | None = Field(None, description="Price per unit")
    price: number(low=0) | None = Field(None, description="Older name of hourly_price")
    unit: choice("hour", "gib_month") = Field("hour", description="Per hour, or per GiB-month")
    effective_from: Effective = BEGINNING_DAY
    currency: str | None = Field(None, description="Default: the file's `currency`")

    @model_validator(mode="after")
    def _one_selector(self) -> NodePrice:
        found: list[tuple[str, str]] = []
        if (self.node is None) == (self.label is None):
            found.append(("", "give exactly one of node, label"))
        if self.label is not None and "=" not in self.label:
            found.append(("label", f"expected key=value, got {self.label!r}"))
        if self.hourly_price is None and self.price is None:
            found.append(("hourly_price", "expected a number, got None"))
        raise_problems(found)
        return self


class ExchangeRate(Section):
    from_: CurrencyCode = Field(alias="from", description="The lines' currency")
    to: CurrencyCode | None = Field(None, description="Default and only choice: `currency`")
    rate: Rate = Field(description="Units of `to` per unit of `from`, up to 8 decimals")
    effective_from: Effective


class PlatformSection(Section):
    namespaces: list[str] | None = Field(
        None, description="Platform namespaces (replaces the shipped list)"
    )
    namespace_prefixes: list[str] | None = Field(None, description="Platform namespace prefixes")
    owner: Owner = Field(
        default_factory=Owner, description="Who keeps platform cost (default platform/platform)"
    )


class Labels(Section):
    aliases: dict[IdText, str] = Field(
        default_factory=dict, description="alias key -> canonical key, e.g. squad: team"
    )
    dns_prefixes: list[str] = Field(
        default_factory=list, description="Your own label DNS prefixes, e.g. example.com/"
    )


class SelectorMapping(Section):
    selector: Selector = Field(description="A Kubernetes label selector, e.g. app in (a, b)")
    cluster: str | None = Field(None, description="Only this cluster")
    team: str | None = None
    cost_center: str | None = None
    application: str | None = None
    effective_from: Effective = BEGINNING_DAY

    @model_validator(mode="after")
    def _names_an_owner(self) -> SelectorMapping:
        if not (self.team or self.cost_center or self.application):
            raise ValueError("give at least one of team, cost_center, application")
        return self


class NamespaceMapping(Section):
    namespace: str = Field(description="The namespace mapped to an owner")
    cluster: str | None = None
    team: str | None = None
    cost_center: str | None = None
    application: str | None = None
    effective_from: Effective = BEGINNING_DAY


class Ownership(Section):
    selector_mappings: list[SelectorMapping] = Field(
        default_factory=list, description="Owner rule 1, first match in list order"
    )
    namespace_mappings: list[NamespaceMapping] = Field(
        default_factory=list, description="Owner rule 3"
    )


class FixedShare(Section):
    team: str | None = None
    cost_center: str | None = None
    percent: Percent = Field(description="Percent of the pool; a rule's percents sum to 100")


class PoolRule(Section):
    rule: choice(*RULES) = Field(description="How the pool is distributed (SPEC §7)")
    basis: choice(*BASES) = Field("direct", description="For proportional: what shares are in")
    hybrid_share: Percent = Field(0, description="Percent that stays with the platform owner")
    scope: choice(*SCOPES) = Field("cluster", description="Where receivers and weights come from")
    include_unowned: bool = Field(True, description="Unowned cost counts as a receiver")
    include_platform: bool = Field(False, description="Platform usage counts in the basis")
    shares: list[FixedShare] = Field(default_factory=list, description="For rule: fixed")

    @model_validator(mode="after")
    def _shares(self) -> PoolRule:
        if self.rule == "fixed":
            if not self.shares:
                raise ValueError(
                    problems([("shares", "the fixed rule needs owners and percentages")])
                )
            total = sum(share.percent for share in self.shares)
            if round(total, 9) != 100:
                raise ValueError(problems([("shares", f"percentages sum to {total:g}, not 100")]))
        elif self.shares:
            raise ValueError(problems([("shares", "only used with rule: fixed")]))
        return self


Rule = Annotated[PoolRule, BeforeValidator(_rule_shorthand)]


class Pools(Section):
    """A rule per pool of cost no workload claimed directly (SPEC §7); a name alone is the
    rule with its defaults."""

    platform: Rule | None = None
    infrastructure_idle: Rule | None = None
    workload_idle: Rule | None = None
    unattributed_storage: Rule | None = None
    unattributed_network: Rule | None = None

    @model_validator(mode="after")
    def _owner_rule(self) -> Pools:
        raise_problems(
            [
                (f"{pool}.rule", "'owner' applies to workload_idle only")
                for pool in POOLS
                if pool != "workload_idle"
                and getattr(self, pool) is not None
                and getattr(self, pool).rule == "owner"
            ]
        )
        return self


class DistributionPolicy(Section):
    preset: choice(*PRESETS) | None = Field(
        None, description="Default platform_absorbs (globally); a cluster's overrides it"
    )
    hybrid_share: Percent | None = Field(None, description="For preset: hybrid (default 30)")
    pools: Pools = Field(default_factory=Pools)

    @model_validator(mode="after")
    def _hybrid_share(self) -> DistributionPolicy:
        if self.hybrid_share is not None and self.preset != "hybrid":
            raise ValueError(problems([("hybrid_share", "only used with preset: hybrid")]))
        return self


class Distribution(DistributionPolicy):
    clusters: dict[str, DistributionPolicy] = Field(
        default_factory=dict, description="cluster ID -> its own preset and pool rules"
    )


class Network(Section):
    include_data_transfer: bool = Field(
        False, description="Data transfer on node IDs is the unattributed-network pool (§4)"
    )


class Close(Section):
    grace_days: whole(low=0) = Field(4, description="Days after month end before it closes")
    deadline_days: whole(low=0) = Field(
        10, description="Days after month end when a blocked cluster falls back to its estimate"
    )
    factor_bounds: list[number(low=0)] = Field(
        default_factory=lambda: [0.2, 5.0], description="[low, high] of a family's factor"
    )
    unassigned_policy: choice("separate", "proportional") = Field(
        "separate", description="`__unassigned__`: its own line, or spread over the lines"
    )
    line_grain: choice("cost_center", "team") = Field(
        "cost_center", description="Bill lines per cost center or per team"
    )

    @model_validator(mode="after")
    def _bounds(self) -> Close:
        found: list[tuple[str, str]] = []
        if self.deadline_days < self.grace_days:
            found.append(("deadline_days", "must not be before grace_days"))
        if len(self.factor_bounds) != 2:
            found.append(("factor_bounds", "expected [low, high]"))
        elif self.factor_bounds[0] >= self.factor_bounds[1]:
            found.append(("factor_bounds", "low must be below high"))
        raise_problems(found)
        return self


class Retention(Section):
    billing_days: whole(1, 3650) = Field(90, description="Days raw billing rows are kept")


class Reruns(Section):
    repair_window_days: whole(low=0) = Field(7, description="Late data within it is repaired")
    max_days_back: whole(low=1) = Field(92, description="Oldest day a re-run may touch")


class KubeledgerConfig(Section):
    """kubeledger.yml: every setting has a default (SPEC §3.3)."""

    currency: str = Field("USD", description="The billing currency (ISO 4217)")
    clusters: list[Cluster] = Field(default_factory=list)
    pricing: Pricing = Field(default_factory=Pricing)
    node_prices: list[NodePrice] = Field(default_factory=list, description="The rate card")
    platform: PlatformSection = Field(default_factory=PlatformSection)
    labels: Labels = Field(default_factory=Labels)
    ownership: Ownership = Field(default_factory=Ownership)
    distribution: Distribution = Field(default_factory=Distribution)
    network: Network = Field(default_factory=Network)
    close: Close = Field(default_factory=Close)
    retention: Retention = Field(default_factory=Retention)
    reruns: Reruns = Field(default_factory=Reruns)
    cloud_charges: CloudCharges = Field(default_factory=CloudCharges)
    budgets: Budgets = Field(default_factory=Budgets)
    exchange_rates: list[ExchangeRate] = Field(default_factory=list)
    gpu: Gpu = Field(default_factory=Gpu)

    model_config = {
        "title": "kubeledger.yml",
        "json_schema_extra": {"$id": "kubeledger.schema.json"},
    }

    @model_validator(mode="after")
    def _across_sections(self) -> KubeledgerConfig:
        found: list[tuple[str, str]] = []
        ids: list[str] = []
        for i, cluster in enumerate(self.clusters):
            if cluster.id in ids:
                found.append((f"clusters[{i}].id", f"cluster {cluster.id!r} is listed twice"))
            ids.append(cluster.id)
        for cluster_id in self.distribution.clusters:
            if cluster_id not in ids:
                found.append((f"distribution.clusters.{cluster_id}", "no such cluster in clusters"))
        found += [
            (f"cloud_charges.{path}", message)
            for path, message in self.cloud_charges.unknown_clusters(ids)
        ]
        billing = self.currency.strip().upper()
        seen: dict[tuple[str, str, dt.date], int] = {}
        for i, entry in enumerate(self.exchange_rates):
            target = entry.to or billing
            if target != billing:
                found.append(
                    (
                        f"exchange_rates[{i}].to",
                        f"{target} is not the billing currency (`currency: {billing}`); "
                        "lines are converted into the billing currency only",
                    )
                )
            if entry.from_ == target:
                found.append(
                    (f"exchange_rates[{i}].from", f"{entry.from_} is the billing currency itself")
                )
            identity = (entry.from_, target, entry.effective_from)
            if identity in seen:
                found.append(
                    (
                        f"exchange_rates[{i}]",
                        f"duplicate of exchange_rates[{seen[identity]}] "
                        f"({entry.from_} to {target} from {entry.effective_from})",
                    )
                )
            seen.setdefault(identity, i)
        # a budget in another currency is converted by a rate from it (fct_budget_status_daily)
        rated = {entry.from_ for entry in self.exchange_rates}
        for i, budget in enumerate(self.budgets.owners):
            if budget.currency and budget.currency not in (billing, *rated):
                found.append(
                    (
                        f"budgets.owners[{i}].currency",
                        f"{budget.name}'s budget is in {budget.currency}, the costs in {billing}, "
                        f"and no exchange_rates entry converts {budget.currency}: add one "
                        f"(from: {budget.currency}) or give the budget in {billing}",
                    )
                )
        raise_problems(found)
        return self
