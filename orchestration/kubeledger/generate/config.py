"""The demo's kubeledger.yml: one entry per generated cluster, with the billing links that
pick each cluster's lines on its cloud bill; one file for one fleet or for many.

Global keys (labels, ownership mappings, distribution) are the same for every fleet; what a
fleet's Messiness adds is restricted to its own clusters (`cluster:`), and per-cluster
distribution presets and owner defaults go under `distribution.clusters` and each cluster's
`defaults`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kubeledger.generate import cloud_charges
from kubeledger.generate.fleet import Cluster
from kubeledger.generate.messiness import Messiness

# Messiness.aliased_selector_mappings: keys with a DNS prefix (name -> alias app) and a
# user alias (squad -> team), in the order the ownership rules read them.
SELECTOR_MAPPINGS = (
    '    - {selector: "app.kubernetes.io/name in (cart, checkout-worker)", cost_center: cc-1050}',
    '    - {selector: "squad=discovery", team: search}',
)
NOTIN_APPLICATION = "analytics-batch"
NOTIN_SELECTOR = "app.kubernetes.io/name notin (search, elasticsearch, search-reindex)"
# Messiness.namespace_mapping_under_labels: every checkout pod carries team=payments.
NAMESPACE_MAPPING = ("checkout", "storefront")


@dataclass
class ConfigPart:
    """One fleet's share of the merged configuration."""

    clusters: list[Cluster]
    messiness: Messiness
    distribution: dict[str, dict] = field(default_factory=dict)  # cluster -> preset section
    defaults: dict[str, dict] = field(default_factory=dict)  # cluster -> owner defaults
    nodes: int = 0  # the fleet's node count: sizes the demo's owner budgets (none when 0)

    @property
    def notin_cluster(self) -> Cluster | None:
        """The cluster the fleet's `notin` mapping is restricted to: its first GKE cluster,
        else its first cluster."""
        if not self.messiness.aliased_selector_mappings or not self.clusters:
            return None
        return next((c for c in self.clusters if c.kind == "gke"), self.clusters[0])


def _inline(values: dict) -> str:
    return "{" + ", ".join(f"{k}: {'null' if v is None else v}" for k, v in values.items()) + "}"


def _cluster_block(cluster: Cluster, defaults: dict | None) -> list[str]:
    cid = cluster.cluster_id
    accounts = cluster.accounts
    lines = [f"  - id: {cid}", f"    provider: {cluster.provider}"]
    if cluster.provider == "aws":
        lines += [
            "    billing_link:",
            f'      accounts: ["{accounts.aws_account}"]',
            f'      tags: ["kubernetes.io/cluster/{cid}"]     # "key" or "key=value"',
            "      resource_id_patterns: []                      # regexes, case-insensitive",
            "    defaults: {team: null, cost_center: null, application: null}",
        ]
    elif cluster.provider == "gcp":
        lines += [
            f'    billing_link: {{accounts: ["{accounts.gcp_project}"], '
            f'tags: ["goog-k8s-cluster-name={cid}"]}}',
        ]
    elif cluster.provider == "azure":
        pattern = f"/resourcegroups/{cluster.resource_group.lower()}/"
        lines += [
            f'    billing_link: {{accounts: ["{accounts.azure_subscription}"], '
            f'resource_id_patterns: ["{pattern}"]}}',
        ]
    else:
        lines += ["    defaults: {cost_center: datacenter}"]
    if defaults is not None:
        lines = [line for line in lines if not line.startswith("    defaults:")]
        lines.append(f"    defaults: {_inline(defaults)}")
    return lines


def render_config(parts: list[ConfigPart]) -> str:
    lines = [
        "# kubeledger configuration for the generated demo fleet.",
        "currency: USD",
        "clusters:",
    ]
    for part in parts:
        for cluster in part.clusters:
            lines += _cluster_block(cluster, part.defaults.get(cluster.cluster_id))
    lines += [
        "labels:",
        "  aliases: {squad: team}",
    ]
    selectors = []
    if any(p.messiness.aliased_selector_mappings for p in parts):
        selectors += list(SELECTOR_MAPPINGS)
    for part in parts:
        cluster = part.notin_cluster
        if cluster is not None:
            selectors.append(
                f'    - {{selector: "{NOTIN_SELECTOR}", cluster: {cluster.cluster_id}, '
                f"application: {NOTIN_APPLICATION}}}"
            )
    namespaces = [
        f"    - {{namespace: {NAMESPACE_MAPPING[0]}, cluster: {cluster.cluster_id}, "
        f"team: {NAMESPACE_MAPPING[1]}}}"
        for part in parts
        if part.messiness.namespace_mapping_under_labels
        for cluster in part.clusters
    ]
    if selectors or namespaces:
        lines.append("ownership:")
        if selectors:
            lines += ["  selector_mappings:", *selectors]
        if namespaces:
            lines += ["  namespace_mappings:", *namespaces]
    overrides = [(cid, section) for part in parts for cid, section in part.distribution.items()]
    if overrides:
        lines += ["distribution:", "  preset: platform_absorbs", "  clusters:"]
        lines += [f"    {cid}: {_inline(section)}" for cid, section in overrides]
    aws_accounts = sorted(
        {c.accounts.aws_account for part in parts for c in part.clusters if c.provider == "aws"}
    )
    if aws_accounts:
        lines += cloud_charges.config_section(aws_accounts)
    lines += _budgets_section(sum(part.nodes for part in parts))
    lines.append("")
    return "\n".join(lines)


# Owner budgets per node of the fleet: payments costs about 16 a node-month, so October
# overruns its 8 (80% of used and 100% of forecast); cc-2002 (search, about 31) stays
# within 100 (90% of forecast).
PAYMENTS_BUDGET_PER_NODE = 8
SEARCH_BUDGET_PER_NODE = 100


def _budgets_section(nodes: int) -> list[str]:
    if nodes < 1:
        return []
    return [
        "# Budgets per team, cost center or application (alerts: the Dagster check",
        "# budget_thresholds; set budgets.webhook_url to have them POSTed).",
        "budgets:",
        "  owners:",
        f"    - {{team: payments, monthly_budget: {PAYMENTS_BUDGET_PER_NODE * nodes},",
        "       thresholds: [{percent: 80}, {percent: 100, use_estimated: true}]}",
        f"    - {{cost_center: cc-2002, monthly_budget: {SEARCH_BUDGET_PER_NODE * nodes},",
        "       thresholds: [{percent: 90, use_estimated: true}]}",
    ]


def write_config(out_dir: Path, parts: list[ConfigPart]) -> Path:
    path = out_dir / "kubeledger.yml"
    path.write_text(render_config(parts))
    return path
