"""kubeledger.yml as pydantic models: every problem of a file reported at once with its key
path, the published JSON Schema (kubeledger.schema.json) is the models' own, and the demo's
configuration is valid under it."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from kubeledger.config import SCHEMA_PATH, ConfigError, json_schema, json_schema_text, parse_config
from kubeledger.generate import generate_fleet

BROKEN = {
    "clusters": [
        {"id": "a", "provider": "amazon"},
        {"provider": "aws"},
        {"id": "c", "provider": "gcp", "billing_link": {"tags": "x"}},
    ],
    "pricing": {"cpu_cost_weight": "x"},
    "close": {"grace_days": -1, "unassigned_policy": "everyone"},
    "clusterz": [],
    "cloud_charges": {"allocations": [{"name": ""}], "estimate_window_days": 0},
    "exchange_rates": [{"from": "eur", "rate": 0}],
}


def test_every_problem_is_reported_at_once_with_its_key():
    with pytest.raises(ConfigError) as error:
        parse_config(BROKEN)
    lines = str(error.value).splitlines()
    assert lines[0] == "kubeledger.yml has 12 problems:"
    assert sorted(line.strip() for line in lines[1:]) == sorted(
        [
            "clusters[0].provider: 'amazon' is not one of aws, gcp, azure, focus, on_prem",
            "clusters[1].id: required",
            "clusters[2].billing_link.tags: expected list, got 'x'",
            "pricing.cpu_cost_weight: expected a number, got 'x'",
            "close.grace_days: -1 is below 0",
            "close.unassigned_policy: 'everyone' is not one of separate, proportional",
            "clusterz: unknown setting (allowed: budgets, close, cloud_charges, clusters, "
            "currency, distribution, exchange_rates, gpu, labels, network, node_prices, "
            "ownership, platform, pricing, reruns, retention)",
            "cloud_charges.allocations[0].name: expected a non-empty text, got ''",
            "cloud_charges.estimate_window_days: expected a whole number of days from 1 to 31, "
            "got 0",
            "exchange_rates[0].from: 'eur' is not an ISO 4217 code (three upper-case letters)",
            "exchange_rates[0].rate: 0 must be a positive number",
            "exchange_rates[0].effective_from: required",
        ]
    )


def test_checks_across_keys_name_each_key():
    """Checks that need several keys (duplicates, references) report each key they find."""
    with pytest.raises(ConfigError) as error:
        parse_config(
            {
                "clusters": [{"id": "a", "provider": "aws"}, {"id": "a", "provider": "gcp"}],
                "distribution": {"clusters": {"b": {"preset": "proportional"}}},
            }
        )
    assert str(error.value).splitlines()[1:] == [
        "  clusters[1].id: cluster 'a' is listed twice",
        "  distribution.clusters.b: no such cluster in clusters",
    ]


def test_the_published_schema_is_the_models_own():
    """kubeledger.schema.json is written by `python -m kubeledger.config`; rerun it after
    changing a model."""
    assert SCHEMA_PATH.read_text() == json_schema_text(), (
        "kubeledger.schema.json is stale: run `python -m kubeledger.config`"
    )
    schema = json.loads(SCHEMA_PATH.read_text())
    assert schema["additionalProperties"] is False
    provider = schema["$defs"]["Cluster"]["properties"]["provider"]
    assert provider["enum"] == ["aws", "gcp", "azure", "focus", "on_prem"]
    assert schema["$defs"]["Close"]["properties"]["grace_days"]["default"] == 4


def test_the_demo_configuration_is_valid_under_the_schema(tmp_path):
    generate_fleet(tmp_path, nodes=4, days=2, pods_per_node=4)
    document = yaml.safe_load((tmp_path / "kubeledger.yml").read_text())
    # YAML reads unquoted dates as dates; an editor validates the text, where they are strings.
    document = json.loads(json.dumps(document, default=str))
    jsonschema.validate(document, json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"clusters": [{"id": "a", "provider": "amazon"}]}, json_schema())
