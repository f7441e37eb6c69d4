"""The demo's kubeledger.yml: one entry per generated cluster, with the billing links that
pick each cluster's lines on its cloud bill."""

from __future__ import annotations

from pathlib import Path

from kubeledger.generate.fleet import (
    AWS_ACCOUNT,
    AZURE_SUBSCRIPTION,
    GCP_PROJECT,
    Cluster,
)


def _cluster_block(cluster: Cluster) -> list[str]:
    cid = cluster.cluster_id
    lines = [f"  - id: {cid}", f"    provider: {cluster.provider}"]
    if cluster.provider == "aws":
        lines += [
            "    billing_link:",
            f'      accounts: ["{AWS_ACCOUNT}"]',
            f'      tags: ["kubernetes.io/cluster/{cid}"]     # "key" or "key=value"',
            "      resource_id_patterns: []                      # regexes, case-insensitive",
            "    defaults: {team: null, cost_center: null, application: null}",
        ]
    elif cluster.provider == "gcp":
        lines += [
            f'    billing_link: {{accounts: ["{GCP_PROJECT}"], '
            f'tags: ["goog-k8s-cluster-name={cid}"]}}',
        ]
    elif cluster.provider == "azure":
        pattern = f"/resourcegroups/{cluster.resource_group.lower()}/"
        lines += [
            f'    billing_link: {{accounts: ["{AZURE_SUBSCRIPTION}"], '
            f'resource_id_patterns: ["{pattern}"]}}',
        ]
    else:
        lines += ["    defaults: {cost_center: datacenter}"]
    return lines


def render_config(clusters: list[Cluster]) -> str:
    lines = [
        "# kubeledger configuration for the generated demo fleet.",
        "currency: USD",
        "clusters:",
    ]
    for cluster in clusters:
        lines += _cluster_block(cluster)
    lines += [
        "labels:",
        "  aliases: {squad: team}",
        "",
    ]
    return "\n".join(lines)


def write_config(out_dir: Path, clusters: list[Cluster]) -> Path:
    path = out_dir / "kubeledger.yml"
    path.write_text(render_config(clusters))
    return path
