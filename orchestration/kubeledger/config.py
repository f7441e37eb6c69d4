"""kubeledger.yml: read, validate (kubeledger.config_models), and write as the `config`
tables dbt reads (docs/config-tables.md); `python -m kubeledger.config` publishes the models'
JSON Schema as kubeledger.schema.json, which editors use for completion.

An invalid file raises `ConfigError` listing every problem with its key path, e.g.
`clusters[1].provider: 'amazon' is not one of aws, gcp, azure, focus, on_prem`.
To add a setting: a field on its section's model, a column in TABLE_COLUMNS and a line in
`_tables` or `_settings`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import yaml

from kubeledger.config_allocations import CLOUD_CHARGE_TABLE_COLUMNS
from kubeledger.config_base import ConfigError, validate
from kubeledger.config_budgets import BUDGET_TABLE_COLUMNS
from kubeledger.config_gpu import GPU_TABLE_COLUMNS
from kubeledger.config_models import (
    POOLS,
    KubeledgerConfig,
    NamespaceMapping,
    Owner,
    PoolRule,
    SelectorMapping,
)
from kubeledger.config_selectors import parse_selector

__all__ = ["Config", "ConfigError", "KubeledgerConfig", "load_config", "parse_config"]

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "kubeledger.schema.json"


def normalize_tag_key(key: str) -> str:
    """The tag-key form billing links match on (same rule as the SQL macro)."""
    key = key.strip().lower()
    for prefix in ("user:", "user_"):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    return re.sub(r"[^a-z0-9]", "_", key)


# --- settings and tables ------------------------------------------------------------------------


@dataclass
class Config:
    """The validated configuration, as rows per config table."""

    source: Path | None
    settings: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # where budget alerts are POSTed (budgets.webhook_url); kept out of the warehouse tables
    budgets_webhook_url: str | None = None


def _settings(model: KubeledgerConfig) -> dict[str, Any]:
    """The one row of `config.settings`."""
    return {
        "cpu_cost_weight": model.pricing.cpu_cost_weight,
        "memory_cost_weight": model.pricing.memory_cost_weight,
        "estimate_lookback_days": model.pricing.estimate_lookback_days,
        "include_data_transfer": model.network.include_data_transfer,
        "platform_team": model.platform.owner.team or "platform",
        "platform_cost_center": model.platform.owner.cost_center or "platform",
        "grace_days": model.close.grace_days,
        "deadline_days": model.close.deadline_days,
        "factor_min": model.close.factor_bounds[0],
        "factor_max": model.close.factor_bounds[1],
        "unassigned_policy": model.close.unassigned_policy,
        "bill_line_grain": model.close.line_grain,
        "repair_window_days": model.reruns.repair_window_days,
        "rerun_max_days_back": model.reruns.max_days_back,
        "billing_retention_days": model.retention.billing_days,
        "currency": model.currency,
    }


DEFAULT_SETTINGS: dict[str, Any] = _settings(KubeledgerConfig())


def _owner(source: Owner | SelectorMapping | NamespaceMapping) -> dict[str, str | None]:
    return {
        "team": source.team,
        "cost_center": source.cost_center,
        "application": source.application,
    }


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
    elif preset in ("proportional", "user_projects_proportional"):
        rule["rule"] = "proportional"
    elif preset == "hybrid":
        rule.update(rule="proportional", hybrid_share=hybrid_share)
    elif preset == "user_projects_even":
        rule["rule"] = "even"
    return rule


def _distribution_rows(model: KubeledgerConfig, tables: dict[str, list[dict]]) -> None:
    policies = [("*", model.distribution), *model.distribution.clusters.items()]
    for cluster_id, policy in policies:
        preset = policy.preset or ("platform_absorbs" if cluster_id == "*" else None)
        hybrid_share = policy.hybrid_share
        if preset == "hybrid" and hybrid_share is None:
            hybrid_share = 30.0
        for pool in POOLS:
            rule = _preset_rule(preset, pool, hybrid_share) if preset else None
            override: PoolRule | None = getattr(policy.pools, pool)
            if override is not None:
                rule = override.model_dump(exclude={"shares"})
                rule["hybrid_share"] = float(rule["hybrid_share"])
                for share in override.shares:
                    tables["distribution_fixed_shares"].append(
                        {
                            "cluster_id": cluster_id,
                            "pool": pool,
                            "team": share.team,
                            "cost_center": share.cost_center,
                            "percent": share.percent,
                        }
                    )
            if rule is not None:
                tables["distribution_rules"].append(
                    {"cluster_id": cluster_id, "pool": pool, **rule}
                )


def _tables(model: KubeledgerConfig) -> dict[str, list[dict[str, Any]]]:
    currency = model.currency
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLE_COLUMNS}
    billing = currency.strip().upper()
    for entry in model.exchange_rates:
        tables["exchange_rates"].append(
            {
                "from_currency": entry.from_,
                "to_currency": entry.to or billing,
                "rate": entry.rate,
                "effective_from": entry.effective_from,
            }
        )
    for cluster in model.clusters:
        link = cluster.billing_link
        tables["clusters"].append(
            {
                "cluster_id": cluster.id,
                "provider": cluster.provider,
                "has_billing_link": link is not None and cluster.provider != "on_prem",
                "currency": cluster.currency or currency,
                "default_team": cluster.defaults.team,
                "default_cost_center": cluster.defaults.cost_center,
                "default_application": cluster.defaults.application,
                "cluster_arn": link.cluster_arn.lower() if link and link.cluster_arn else None,
            }
        )
        if link is None:
            continue
        for account in link.accounts:
            tables["billing_link_accounts"].append(
                {"cluster_id": cluster.id, "account_id": account}
            )
        for tag in link.tags:
            tag_key, _, tag_value = tag.partition("=")
            tables["billing_link_tags"].append(
                {
                    "cluster_id": cluster.id,
                    "tag_key": tag_key,
                    "tag_key_normalized": normalize_tag_key(tag_key),
                    "tag_value": tag_value or None,
                }
            )
        for pattern in link.resource_id_patterns:
            tables["billing_link_patterns"].append(
                {"cluster_id": cluster.id, "pattern": pattern.lower()}
            )
    for i, price in enumerate(model.node_prices, start=1):
        tables["rate_card"].append(
            {
                "cluster_id": price.cluster,
                "resource": price.resource,
                "selector_type": "node" if price.node is not None else "label",
                "selector": price.node if price.node is not None else price.label,
                "price": price.hourly_price if price.hourly_price is not None else price.price,
                "unit": price.unit,
                "currency": price.currency or currency,
                "effective_from": price.effective_from,
                "list_position": i,
            }
        )
    platform = model.platform
    if platform.namespaces is not None or platform.namespace_prefixes is not None:
        for ns in platform.namespaces or []:
            tables["platform_namespaces"].append({"namespace_pattern": ns, "match_type": "exact"})
        for ns in platform.namespace_prefixes or []:
            tables["platform_namespaces"].append({"namespace_pattern": ns, "match_type": "prefix"})
    for prefix in model.labels.dns_prefixes:
        tables["label_dns_prefixes"].append({"dns_prefix": prefix})
    for alias, canonical in model.labels.aliases.items():
        tables["label_aliases"].append({"alias_key": alias, "canonical_key": canonical})
    for i, mapping in enumerate(model.ownership.selector_mappings, start=1):
        for j, (selector_key, operator, values) in enumerate(parse_selector(mapping.selector), 1):
            tables["selector_mappings"].append(
                {
                    "list_position": i,
                    "requirement_position": j,
                    "cluster_id": mapping.cluster,
                    "selector_key": selector_key,
                    "operator": operator,
                    "label_values": values,
                    **_owner(mapping),
                    "effective_from": mapping.effective_from,
                }
            )
    for mapping in model.ownership.namespace_mappings:
        tables["namespace_mappings"].append(
            {
                "cluster_id": mapping.cluster,
                "namespace": mapping.namespace,
                **_owner(mapping),
                "effective_from": mapping.effective_from,
            }
        )
    _distribution_rows(model, tables)
    tables.update(model.cloud_charges.tables(currency))
    tables.update(model.budgets.tables(currency))
    tables.update(model.gpu.tables())
    tables["settings"] = [_settings(model)]
    return tables


def load_config(path: Path | None) -> Config:
    """Read and validate kubeledger.yml; a missing file gives every default."""
    raw: Any = {}
    if path is not None and path.exists():
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping of settings, got {raw!r}")
    return parse_config(raw, source=path if path is not None and path.exists() else None)


def parse_config(raw: dict[str, Any], source: Path | None = None) -> Config:
    """Validate the settings of a kubeledger.yml; raises ConfigError listing every problem."""
    model = validate(KubeledgerConfig, raw)
    tables = _tables(model)
    return Config(
        source=source,
        settings=tables["settings"][0],
        tables=tables,
        budgets_webhook_url=model.budgets.webhook_url,
    )


def json_schema() -> dict[str, Any]:
    """The JSON Schema of kubeledger.yml, as published in kubeledger.schema.json."""
    return KubeledgerConfig.model_json_schema(by_alias=True)


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=False) + "\n"


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
TABLE_COLUMNS.update(BUDGET_TABLE_COLUMNS)
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


if __name__ == "__main__":
    # `python -m kubeledger.config` rewrites kubeledger.schema.json from the models.
    SCHEMA_PATH.write_text(json_schema_text())
    print(f"wrote {SCHEMA_PATH}")
