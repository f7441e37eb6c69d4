"""kubeledger.yml: read, validate, and write as the `config` tables dbt reads.

Every setting has a default; an invalid one raises `ConfigError` naming the key, e.g.
`clusters[1].provider: 'amazon' is not one of aws, gcp, azure, focus, on_prem`.
The tables written are documented in docs/config-tables.md.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import yaml

from kubeledger.config_allocations import CLOUD_CHARGE_TABLE_COLUMNS, parse_cloud_charges
from kubeledger.config_gpu import GPU_TABLE_COLUMNS, GpuConfigError, parse_gpu

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
# One requirement of a Kubernetes label selector: `key in (a, b)`, `key notin (a)`,
# `key = a` / `key == a`, `key != a`, `key` (exists) or `!key` (does not exist).
REQUIREMENT_RE = re.compile(
    r"^\s*(?P<negated>!)?\s*(?P<key>[A-Za-z0-9_./-]+)"
    r"(?:\s+(?P<op>in|notin|not in)\s*\((?P<values>[^()]*)\)"
    r"|\s*(?P<eq>==?|!=)\s*(?P<value>[^\s,()!=]+))?\s*$"
)

DEFAULT_SETTINGS: dict[str, Any] = {
    "cpu_cost_weight": 0.5,
    "memory_cost_weight": 0.5,
    "estimate_lookback_days": 7,
    "include_data_transfer": False,
    "platform_team": "platform",
    "platform_cost_center": "platform",
    "grace_days": 4,
    "deadline_days": 10,
    "factor_min": 0.2,
    "factor_max": 5.0,
    "unassigned_policy": "separate",
    "bill_line_grain": "cost_center",
    "repair_window_days": 7,
    "rerun_max_days_back": 92,
    "billing_retention_days": 90,
    "currency": "USD",
}


class ConfigError(ValueError):
    """A setting in kubeledger.yml is invalid; the message names the key."""


def normalize_tag_key(key: str) -> str:
    """The tag-key form billing links match on (same rule as the SQL macro)."""
    key = key.strip().lower()
    for prefix in ("user:", "user_"):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    return re.sub(r"[^a-z0-9]", "_", key)


@dataclass
class Config:
    """The validated configuration, as rows per config table."""

    source: Path | None
    settings: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _expect(value: Any, kind: type | tuple[type, ...], key: str) -> Any:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ConfigError(f"{key}: expected {names}, got {value!r}")
    return value


def _choice(value: Any, choices: tuple[str, ...], key: str) -> str:
    if value not in choices:
        raise ConfigError(f"{key}: {value!r} is not one of {', '.join(choices)}")
    return value


def _date(value: Any, key: str) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise ConfigError(f"{key}: {value!r} is not a date (YYYY-MM-DD)") from exc


def _number(value: Any, key: str, *, low: float | None = None, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{key}: expected a number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{key}: {value} is outside [{low}, {high}]")
    return float(value)


def _unknown_keys(section: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(set(section) - allowed)
    if unknown:
        raise ConfigError(
            f"{where}{unknown[0]}: unknown setting (allowed: {', '.join(sorted(allowed))})"
        )


def _owner_fields(section: dict | None, key: str) -> dict[str, str | None]:
    section = section or {}
    _expect(section, dict, key)
    _unknown_keys(section, {"team", "cost_center", "application"}, f"{key}.")
    return {name: section.get(name) for name in ("team", "cost_center", "application")}


def _clusters(raw: Any, currency: str, tables: dict[str, list[dict]]) -> None:
    clusters = _expect(raw or [], list, "clusters")
    seen: set[str] = set()
    for i, cluster in enumerate(clusters):
        key = f"clusters[{i}]"
        _expect(cluster, dict, key)
        _unknown_keys(
            cluster, {"id", "provider", "billing_link", "defaults", "currency"}, f"{key}."
        )
        cluster_id = _expect(cluster.get("id"), str, f"{key}.id")
        if cluster_id in seen:
            raise ConfigError(f"{key}.id: cluster {cluster_id!r} is listed twice")
        seen.add(cluster_id)
        provider = _choice(cluster.get("provider"), PROVIDERS, f"{key}.provider")
        link = cluster.get("billing_link")
        defaults = _owner_fields(cluster.get("defaults"), f"{key}.defaults")
        cluster_arn = _cluster_arn(link, f"{key}.billing_link.cluster_arn")
        tables["clusters"].append(
            {
                "cluster_id": cluster_id,
                "provider": provider,
                "has_billing_link": link is not None and provider != "on_prem",
                "currency": cluster.get("currency", currency),
                "default_team": defaults["team"],
                "default_cost_center": defaults["cost_center"],
                "default_application": defaults["application"],
                "cluster_arn": cluster_arn,
            }
        )
        if link is None:
            continue
        _expect(link, dict, f"{key}.billing_link")
        link_keys = {"accounts", "tags", "resource_id_patterns", "cluster_arn"}
        _unknown_keys(link, link_keys, f"{key}.billing_link.")
        for account in _expect(link.get("accounts") or [], list, f"{key}.billing_link.accounts"):
            tables["billing_link_accounts"].append(
                {"cluster_id": cluster_id, "account_id": str(account)}
            )
        for j, tag in enumerate(_expect(link.get("tags") or [], list, f"{key}.billing_link.tags")):
            _expect(tag, str, f"{key}.billing_link.tags[{j}]")
            tag_key, _, tag_value = tag.partition("=")
            tables["billing_link_tags"].append(
                {
                    "cluster_id": cluster_id,
                    "tag_key": tag_key,
                    "tag_key_normalized": normalize_tag_key(tag_key),
                    "tag_value": tag_value or None,
                }
            )
        patterns = link.get("resource_id_patterns") or []
        for j, pattern in enumerate(
            _expect(patterns, list, f"{key}.billing_link.resource_id_patterns")
        ):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(
                    f"{key}.billing_link.resource_id_patterns[{j}]: invalid regex ({exc})"
                ) from exc
            tables["billing_link_patterns"].append(
                {"cluster_id": cluster_id, "pattern": pattern.lower()}
            )
        if not (link.get("accounts") or link.get("tags") or patterns):
            raise ConfigError(
                f"{key}.billing_link: give at least one of accounts, tags, resource_id_patterns"
            )


def _cluster_arn(link: Any, key: str) -> str | None:
    """The EKS cluster ARN a billing link gives for its control-plane fee rows (SPEC §4)."""
    if not isinstance(link, dict) or link.get("cluster_arn") is None:
        return None
    arn = _expect(link["cluster_arn"], str, key)
    if not re.fullmatch(r"arn:aws[a-z-]*:eks:[a-z0-9-]+:[0-9]{12}:cluster/[^/\s]+", arn):
        raise ConfigError(
            f"{key}: {arn!r} is no EKS cluster ARN "
            "(expected arn:aws:eks:<region>:<account>:cluster/<name>)"
        )
    return arn.lower()


CURRENCY_CODE_RE = re.compile(r"^[A-Z]{3}$")
# A rate is stored as decimal(14, 8) (docs/config-tables.md): up to 8 places, below 10^6.
RATE_PLACES = 8
RATE_LIMIT = decimal.Decimal(10) ** 6


def _currency_code(value: Any, key: str) -> str:
    if not isinstance(value, str) or not CURRENCY_CODE_RE.match(value):
        raise ConfigError(f"{key}: {value!r} is not an ISO 4217 code (three upper-case letters)")
    return value


def _rate(value: Any, key: str) -> decimal.Decimal:
    """A positive exchange rate, exact: YAML's 1.08 is read from its text, never as a double."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{key}: expected a number, got {value!r}")
    try:
        rate = decimal.Decimal(str(value).strip())
    except decimal.InvalidOperation as exc:
        raise ConfigError(f"{key}: expected a number, got {value!r}") from exc
    if not rate.is_finite() or rate <= 0:
        raise ConfigError(f"{key}: {value!r} must be a positive number")
    if rate >= RATE_LIMIT or rate != round(rate, RATE_PLACES):
        raise ConfigError(
            f"{key}: {value!r} must be below {RATE_LIMIT:,} with at most {RATE_PLACES} decimal "
            "places"
        )
    return rate


def _exchange_rates(raw: Any, currency: str, tables: dict[str, list[dict]]) -> None:
    """`exchange_rates:` (SPEC §3.3): a line in another currency than the billing currency
    (`currency:`) is converted by the rate from its currency in effect on its charge date."""
    billing = currency.strip().upper()
    seen: dict[tuple[str, str, dt.date], int] = {}
    for i, entry in enumerate(_expect(raw or [], list, "exchange_rates")):
        key = f"exchange_rates[{i}]"
        _expect(entry, dict, key)
        _unknown_keys(entry, {"from", "to", "rate", "effective_from"}, f"{key}.")
        for name in ("from", "rate", "effective_from"):
            if name not in entry:
                raise ConfigError(f"{key}.{name}: required")
        source = _currency_code(entry["from"], f"{key}.from")
        target = _currency_code(entry.get("to", billing), f"{key}.to")
        if target != billing:
            raise ConfigError(
                f"{key}.to: {target} is not the billing currency (`currency: {billing}`); "
                "lines are converted into the billing currency only"
            )
        if source == target:
            raise ConfigError(f"{key}.from: {source} is the billing currency itself")
        effective_from = _date(entry["effective_from"], f"{key}.effective_from")
        identity = (source, target, effective_from)
        if identity in seen:
            raise ConfigError(
                f"{key}: duplicate of exchange_rates[{seen[identity]}] "
                f"({source} to {target} from {effective_from})"
            )
        seen[identity] = i
        tables["exchange_rates"].append(
            {
                "from_currency": source,
                "to_currency": target,
                "rate": _rate(entry["rate"], f"{key}.rate"),
                "effective_from": effective_from,
            }
        )


def _node_prices(raw: Any, currency: str, tables: dict[str, list[dict]]) -> None:
    for i, price in enumerate(_expect(raw or [], list, "node_prices")):
        key = f"node_prices[{i}]"
        _expect(price, dict, key)
        _unknown_keys(
            price,
            {
                "cluster",
                "node",
                "label",
                "resource",
                "price",
                "hourly_price",
                "unit",
                "effective_from",
                "currency",
            },
            f"{key}.",
        )
        if ("node" in price) == ("label" in price):
            raise ConfigError(f"{key}: give exactly one of node, label")
        if "label" in price and "=" not in str(price["label"]):
            raise ConfigError(f"{key}.label: expected key=value, got {price['label']!r}")
        amount = price.get("hourly_price", price.get("price"))
        tables["rate_card"].append(
            {
                "cluster_id": _expect(price.get("cluster"), str, f"{key}.cluster"),
                "resource": _choice(
                    price.get("resource", "node"),
                    ("node", "volume", "load_balancer"),
                    f"{key}.resource",
                ),
                "selector_type": "node" if "node" in price else "label",
                "selector": str(price.get("node", price.get("label"))),
                "price": _number(amount, f"{key}.hourly_price", low=0),
                "unit": _choice(price.get("unit", "hour"), ("hour", "gib_month"), f"{key}.unit"),
                "currency": price.get("currency", currency),
                "effective_from": _date(
                    price.get("effective_from", "1970-01-01"), f"{key}.effective_from"
                ),
                "list_position": i + 1,
            }
        )


def _split_requirements(text: str) -> list[str]:
    """The comma-separated requirements of a selector; commas inside `( )` list values."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _selector(text: Any, key: str) -> list[tuple[str, str, str]]:
    """A label selector as (raw key, operator, pipe-joined values) requirements, all of which
    must hold (Kubernetes semantics). The key is kept as written: dbt normalizes it with the
    rule pod label keys go through (`label_key_mapping`), aliases and DNS prefixes included.
    Operators: in, notin (also a pod without the key), exists, not_exists."""
    hint = (
        "use `key in (a, b)`, `key notin (a)`, `key=value`, `key!=value`, `key` or `!key`, "
        "requirements joined by commas"
    )
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{key}: cannot read selector {text!r} ({hint})")
    requirements = []
    for part in _split_requirements(text):
        match = REQUIREMENT_RE.match(part)
        if not match or (match["negated"] and (match["op"] or match["eq"])):
            raise ConfigError(f"{key}: cannot read selector {text!r} ({hint})")
        raw_key = match["key"]
        if match["op"]:
            values = [v.strip() for v in match["values"].split(",") if v.strip()]
            if not values:
                raise ConfigError(f"{key}: selector {text!r} lists no values")
            operator = "in" if match["op"] == "in" else "notin"
            requirements.append((raw_key, operator, "|".join(values)))
        elif match["eq"]:
            operator = "notin" if match["eq"] == "!=" else "in"
            requirements.append((raw_key, operator, match["value"]))
        else:
            requirements.append((raw_key, "not_exists" if match["negated"] else "exists", ""))
    return requirements


def _ownership(raw: Any, tables: dict[str, list[dict]]) -> None:
    raw = _expect(raw or {}, dict, "ownership")
    _unknown_keys(raw, {"selector_mappings", "namespace_mappings"}, "ownership.")
    mappings = _expect(raw.get("selector_mappings") or [], list, "ownership.selector_mappings")
    for i, mapping in enumerate(mappings):
        key = f"ownership.selector_mappings[{i}]"
        _expect(mapping, dict, key)
        _unknown_keys(
            mapping,
            {"selector", "cluster", "team", "cost_center", "application", "effective_from"},
            f"{key}.",
        )
        requirements = _selector(mapping.get("selector"), f"{key}.selector")
        owner = _owner_fields(
            {k: mapping.get(k) for k in ("team", "cost_center", "application") if k in mapping},
            key,
        )
        if not any(owner.values()):
            raise ConfigError(f"{key}: give at least one of team, cost_center, application")
        effective_from = _date(mapping.get("effective_from", "1970-01-01"), f"{key}.effective_from")
        for j, (selector_key, operator, values) in enumerate(requirements):
            tables["selector_mappings"].append(
                {
                    "list_position": i + 1,
                    "requirement_position": j + 1,
                    "cluster_id": mapping.get("cluster"),
                    "selector_key": selector_key,
                    "operator": operator,
                    "label_values": values,
                    **owner,
                    "effective_from": effective_from,
                }
            )
    mappings = _expect(raw.get("namespace_mappings") or [], list, "ownership.namespace_mappings")
    for i, mapping in enumerate(mappings):
        key = f"ownership.namespace_mappings[{i}]"
        _expect(mapping, dict, key)
        _unknown_keys(
            mapping,
            {"namespace", "cluster", "team", "cost_center", "application", "effective_from"},
            f"{key}.",
        )
        owner = _owner_fields(
            {k: mapping.get(k) for k in ("team", "cost_center", "application") if k in mapping},
            key,
        )
        tables["namespace_mappings"].append(
            {
                "cluster_id": mapping.get("cluster"),
                "namespace": _expect(mapping.get("namespace"), str, f"{key}.namespace"),
                **owner,
                "effective_from": _date(
                    mapping.get("effective_from", "1970-01-01"), f"{key}.effective_from"
                ),
            }
        )


def _distribution(raw: Any, cluster_ids: list[str], tables: dict[str, list[dict]]) -> None:
    """`distribution:` — a preset and per-pool rules, globally and per cluster."""
    raw = _expect(raw or {}, dict, "distribution")
    _unknown_keys(raw, {"preset", "hybrid_share", "pools", "clusters"}, "distribution.")
    sections = [("*", raw, "distribution")]
    per_cluster = _expect(raw.get("clusters") or {}, dict, "distribution.clusters")
    for cluster_id, section in per_cluster.items():
        if cluster_id not in cluster_ids:
            raise ConfigError(f"distribution.clusters.{cluster_id}: no such cluster in clusters")
        _expect(section, dict, f"distribution.clusters.{cluster_id}")
        _unknown_keys(
            section, {"preset", "hybrid_share", "pools"}, f"distribution.clusters.{cluster_id}."
        )
        sections.append((cluster_id, section, f"distribution.clusters.{cluster_id}"))
    for cluster_id, section, where in sections:
        preset = section.get("preset", "platform_absorbs" if cluster_id == "*" else None)
        hybrid_share = section.get("hybrid_share")
        if preset is not None:
            _choice(preset, PRESETS, f"{where}.preset")
        if preset == "hybrid":
            hybrid_share = _number(
                hybrid_share if hybrid_share is not None else 30,
                f"{where}.hybrid_share",
                low=0,
                high=100,
            )
        elif hybrid_share is not None:
            raise ConfigError(f"{where}.hybrid_share: only used with preset: hybrid")
        for pool in POOLS:
            rule = _preset_rule(preset, pool, hybrid_share) if preset else None
            override = (section.get("pools") or {}).get(pool)
            if override is not None:
                rule = _pool_rule(override, pool, f"{where}.pools.{pool}", tables, cluster_id)
            if rule is not None:
                tables["distribution_rules"].append(
                    {"cluster_id": cluster_id, "pool": pool, **rule}
                )
        for pool in section.get("pools") or {}:
            _choice(pool, POOLS, f"{where}.pools.{pool}")


def _preset_rule(preset: str, pool: str, hybrid_share: float | None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "rule": "keep",
        "basis": "direct",
        "hybrid_share": 0.0,
        "scope": "cluster",
        "include_unowned": True,
        "include_platform": False,
    }
    if pool == "workload_idle":
        rule["rule"] = "owner"
    elif preset == "proportional":
        rule["rule"] = "proportional"
    elif preset == "hybrid":
        rule.update(rule="proportional", hybrid_share=hybrid_share)
    elif preset == "user_projects_proportional":
        rule["rule"] = "proportional"
    elif preset == "user_projects_even":
        rule["rule"] = "even"
    if preset in ("user_projects_proportional", "user_projects_even") and pool == "workload_idle":
        rule["rule"] = "owner"
    return rule


def _pool_rule(
    raw: Any, pool: str, key: str, tables: dict[str, list[dict]], cluster_id: str
) -> dict[str, Any]:
    if isinstance(raw, str):
        raw = {"rule": raw}
    _expect(raw, dict, key)
    _unknown_keys(
        raw,
        {"rule", "basis", "hybrid_share", "scope", "include_unowned", "include_platform", "shares"},
        f"{key}.",
    )
    rule = _choice(raw.get("rule"), RULES, f"{key}.rule")
    if rule == "owner" and pool != "workload_idle":
        raise ConfigError(f"{key}.rule: 'owner' applies to workload_idle only")
    result = {
        "rule": rule,
        "basis": _choice(raw.get("basis", "direct"), BASES, f"{key}.basis"),
        "hybrid_share": _number(raw.get("hybrid_share", 0), f"{key}.hybrid_share", low=0, high=100),
        "scope": _choice(raw.get("scope", "cluster"), SCOPES, f"{key}.scope"),
        "include_unowned": bool(raw.get("include_unowned", True)),
        "include_platform": bool(raw.get("include_platform", False)),
    }
    if rule == "fixed":
        shares = _expect(raw.get("shares") or [], list, f"{key}.shares")
        if not shares:
            raise ConfigError(f"{key}.shares: the fixed rule needs owners and percentages")
        total = 0.0
        for j, share in enumerate(shares):
            _expect(share, dict, f"{key}.shares[{j}]")
            percent = _number(share.get("percent"), f"{key}.shares[{j}].percent", low=0, high=100)
            total += percent
            tables["distribution_fixed_shares"].append(
                {
                    "cluster_id": cluster_id,
                    "pool": pool,
                    "team": share.get("team"),
                    "cost_center": share.get("cost_center"),
                    "percent": percent,
                }
            )
        if round(total, 9) != 100:
            raise ConfigError(f"{key}.shares: percentages sum to {total:g}, not 100")
    elif raw.get("shares"):
        raise ConfigError(f"{key}.shares: only used with rule: fixed")
    return result


def load_config(path: Path | None) -> Config:
    """Read and validate kubeledger.yml; a missing file gives every default."""
    raw: dict[str, Any] = {}
    if path is not None and path.exists():
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
        _expect(raw, dict, str(path))
    return parse_config(raw, source=path if path is not None and path.exists() else None)


def parse_config(raw: dict[str, Any], source: Path | None = None) -> Config:
    _unknown_keys(
        raw,
        {
            "currency",
            "clusters",
            "pricing",
            "node_prices",
            "platform",
            "labels",
            "ownership",
            "distribution",
            "network",
            "close",
            "retention",
            "reruns",
            "cloud_charges",
            "exchange_rates",
            "gpu",
        },
        "",
    )
    settings = dict(DEFAULT_SETTINGS)
    currency = _expect(raw.get("currency", "USD"), str, "currency")
    settings["currency"] = currency
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLE_COLUMNS}

    pricing = _expect(raw.get("pricing") or {}, dict, "pricing")
    _unknown_keys(
        pricing, {"cpu_cost_weight", "memory_cost_weight", "estimate_lookback_days"}, "pricing."
    )
    for name in ("cpu_cost_weight", "memory_cost_weight"):
        if name in pricing:
            settings[name] = _number(pricing[name], f"pricing.{name}", low=0, high=1)
    if round(settings["cpu_cost_weight"] + settings["memory_cost_weight"], 9) != 1:
        raise ConfigError(
            "pricing.cpu_cost_weight: cpu_cost_weight + memory_cost_weight must sum to 1 "
            f"(got {settings['cpu_cost_weight']} + {settings['memory_cost_weight']})"
        )
    if "estimate_lookback_days" in pricing:
        settings["estimate_lookback_days"] = int(
            _number(pricing["estimate_lookback_days"], "pricing.estimate_lookback_days", low=1)
        )

    network = _expect(raw.get("network") or {}, dict, "network")
    _unknown_keys(network, {"include_data_transfer"}, "network.")
    settings["include_data_transfer"] = bool(network.get("include_data_transfer", False))

    platform = _expect(raw.get("platform") or {}, dict, "platform")
    _unknown_keys(platform, {"namespaces", "namespace_prefixes", "owner"}, "platform.")
    owner = _owner_fields(platform.get("owner"), "platform.owner")
    settings["platform_team"] = owner["team"] or settings["platform_team"]
    settings["platform_cost_center"] = owner["cost_center"] or settings["platform_cost_center"]
    if "namespaces" in platform or "namespace_prefixes" in platform:
        for ns in _expect(platform.get("namespaces") or [], list, "platform.namespaces"):
            tables["platform_namespaces"].append({"namespace_pattern": ns, "match_type": "exact"})
        for ns in _expect(
            platform.get("namespace_prefixes") or [], list, "platform.namespace_prefixes"
        ):
            tables["platform_namespaces"].append({"namespace_pattern": ns, "match_type": "prefix"})

    labels = _expect(raw.get("labels") or {}, dict, "labels")
    _unknown_keys(labels, {"aliases", "dns_prefixes"}, "labels.")
    for j, prefix in enumerate(
        _expect(labels.get("dns_prefixes") or [], list, "labels.dns_prefixes")
    ):
        _expect(prefix, str, f"labels.dns_prefixes[{j}]")
        tables["label_dns_prefixes"].append({"dns_prefix": prefix})
    for alias, canonical in _expect(labels.get("aliases") or {}, dict, "labels.aliases").items():
        _expect(canonical, str, f"labels.aliases.{alias}")
        tables["label_aliases"].append(
            {
                "alias_key": str(alias),
                "canonical_key": canonical,
            }
        )

    close = _expect(raw.get("close") or {}, dict, "close")
    _unknown_keys(
        close,
        {"grace_days", "deadline_days", "factor_bounds", "unassigned_policy", "line_grain"},
        "close.",
    )
    for name in ("grace_days", "deadline_days"):
        if name in close:
            settings[name] = int(_number(close[name], f"close.{name}", low=0))
    if settings["deadline_days"] < settings["grace_days"]:
        raise ConfigError("close.deadline_days: must not be before grace_days")
    if "factor_bounds" in close:
        bounds = _expect(close["factor_bounds"], list, "close.factor_bounds")
        if len(bounds) != 2:
            raise ConfigError("close.factor_bounds: expected [low, high]")
        low = _number(bounds[0], "close.factor_bounds[0]", low=0)
        high = _number(bounds[1], "close.factor_bounds[1]", low=0)
        if low >= high:
            raise ConfigError("close.factor_bounds: low must be below high")
        settings["factor_min"], settings["factor_max"] = low, high
    if "unassigned_policy" in close:
        settings["unassigned_policy"] = _choice(
            close["unassigned_policy"], ("separate", "proportional"), "close.unassigned_policy"
        )
    if "line_grain" in close:
        settings["bill_line_grain"] = _choice(
            close["line_grain"], ("cost_center", "team"), "close.line_grain"
        )

    retention = _expect(raw.get("retention") or {}, dict, "retention")
    _unknown_keys(retention, {"billing_days"}, "retention.")
    if "billing_days" in retention:
        settings["billing_retention_days"] = int(
            _number(retention["billing_days"], "retention.billing_days", low=1, high=3650)
        )
    reruns = _expect(raw.get("reruns") or {}, dict, "reruns")
    _unknown_keys(reruns, {"repair_window_days", "max_days_back"}, "reruns.")
    if "repair_window_days" in reruns:
        settings["repair_window_days"] = int(
            _number(reruns["repair_window_days"], "reruns.repair_window_days", low=0)
        )
    if "max_days_back" in reruns:
        settings["rerun_max_days_back"] = int(
            _number(reruns["max_days_back"], "reruns.max_days_back", low=1)
        )

    _exchange_rates(raw.get("exchange_rates"), currency, tables)
    _clusters(raw.get("clusters"), currency, tables)
    _node_prices(raw.get("node_prices"), currency, tables)
    _ownership(raw.get("ownership"), tables)
    _distribution(raw.get("distribution"), [c["cluster_id"] for c in tables["clusters"]], tables)
    tables.update(
        parse_cloud_charges(
            raw.get("cloud_charges"), currency, [c["cluster_id"] for c in tables["clusters"]]
        )
    )
    try:
        tables.update(parse_gpu(raw.get("gpu")))
    except GpuConfigError as exc:
        raise ConfigError(str(exc)) from exc
    tables["settings"] = [settings]
    return Config(source=source, settings=settings, tables=tables)


# Column name → DuckDB type, per config table (docs/config-tables.md).
TABLE_COLUMNS: dict[str, dict[str, str]] = {
    "clusters": {
        "cluster_id": "varchar",
        "provider": "varchar",
        "has_billing_link": "boolean",
        "currency": "varchar",
        "default_team": "varchar",
        "default_cost_center": "varchar",
        "default_application": "varchar",
        "cluster_arn": "varchar",
    },
    "billing_link_accounts": {"cluster_id": "varchar", "account_id": "varchar"},
    "billing_link_tags": {
        "cluster_id": "varchar",
        "tag_key": "varchar",
        "tag_key_normalized": "varchar",
        "tag_value": "varchar",
    },
    "billing_link_patterns": {"cluster_id": "varchar", "pattern": "varchar"},
    "settings": {
        "cpu_cost_weight": "double",
        "memory_cost_weight": "double",
        "estimate_lookback_days": "integer",
        "include_data_transfer": "boolean",
        "platform_team": "varchar",
        "platform_cost_center": "varchar",
        "grace_days": "integer",
        "deadline_days": "integer",
        "factor_min": "double",
        "factor_max": "double",
        "unassigned_policy": "varchar",
        "bill_line_grain": "varchar",
        "repair_window_days": "integer",
        "rerun_max_days_back": "integer",
        "billing_retention_days": "integer",
        "currency": "varchar",
    },
    "rate_card": {
        "cluster_id": "varchar",
        "resource": "varchar",
        "selector_type": "varchar",
        "selector": "varchar",
        "price": "double",
        "unit": "varchar",
        "currency": "varchar",
        "effective_from": "date",
        "list_position": "integer",
    },
    "exchange_rates": {
        "from_currency": "varchar",
        "to_currency": "varchar",
        "rate": "decimal(14, 8)",
        "effective_from": "date",
    },
    "label_aliases": {"alias_key": "varchar", "canonical_key": "varchar"},
    "label_dns_prefixes": {"dns_prefix": "varchar"},
    "platform_namespaces": {"namespace_pattern": "varchar", "match_type": "varchar"},
    "selector_mappings": {
        "list_position": "integer",
        "requirement_position": "integer",
        "cluster_id": "varchar",
        "selector_key": "varchar",
        "operator": "varchar",
        "label_values": "varchar",
        "team": "varchar",
        "cost_center": "varchar",
        "application": "varchar",
        "effective_from": "date",
    },
    "namespace_mappings": {
        "cluster_id": "varchar",
        "namespace": "varchar",
        "team": "varchar",
        "cost_center": "varchar",
        "application": "varchar",
        "effective_from": "date",
    },
    "distribution_rules": {
        "cluster_id": "varchar",
        "pool": "varchar",
        "rule": "varchar",
        "basis": "varchar",
        "hybrid_share": "double",
        "scope": "varchar",
        "include_unowned": "boolean",
        "include_platform": "boolean",
    },
    "distribution_fixed_shares": {
        "cluster_id": "varchar",
        "pool": "varchar",
        "team": "varchar",
        "cost_center": "varchar",
        "percent": "double",
    },
}


TABLE_COLUMNS.update(CLOUD_CHARGE_TABLE_COLUMNS)
TABLE_COLUMNS.update(GPU_TABLE_COLUMNS)


def write_config_tables(con: duckdb.DuckDBPyConnection, config: Config) -> None:
    """Replace the `config` schema's tables with this configuration, in one transaction."""
    con.execute("create schema if not exists config")
    con.execute("begin transaction")
    try:
        for table, columns in TABLE_COLUMNS.items():
            column_sql = ", ".join(f'"{name}" {kind}' for name, kind in columns.items())
            con.execute(f"create or replace table config.{table} ({column_sql})")
            rows = config.tables.get(table, [])
            if rows:
                placeholders = ", ".join("?" for _ in columns)
                con.executemany(
                    f"insert into config.{table} values ({placeholders})",
                    [[row.get(name) for name in columns] for row in rows],
                )
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise
