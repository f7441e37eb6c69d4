"""kubeledger.yml: defaults, validation messages that name the key, and the config tables."""

from __future__ import annotations

import duckdb
import pytest

from kubeledger.config import ConfigError, load_config, parse_config, write_config_tables

VALID = {
    "currency": "EUR",
    "clusters": [
        {
            "id": "eks-prod",
            "provider": "aws",
            "billing_link": {
                "accounts": ["111111111111"],
                "tags": ["kubernetes.io/cluster/eks-prod", "team=payments"],
            },
            "defaults": {"cost_center": "cc-1"},
        },
        {"id": "dc1", "provider": "on_prem"},
    ],
    "node_prices": [
        {"cluster": "dc1", "node": "dc1-a", "hourly_price": 0.9},
        {
            "cluster": "dc1",
            "label": "node.kubernetes.io/instance-type=metal",
            "hourly_price": 0.5,
            "effective_from": "2026-10-16",
        },
    ],
    "ownership": {
        "selector_mappings": [{"selector": "app in (cart, checkout)", "team": "payments"}],
        "namespace_mappings": [{"namespace": "search", "team": "search"}],
    },
    "distribution": {
        "preset": "hybrid",
        "hybrid_share": 30,
        "pools": {
            "infrastructure_idle": {
                "rule": "fixed",
                "shares": [{"team": "a", "percent": 60}, {"team": "b", "percent": 40}],
            }
        },
    },
}


def test_defaults_when_the_file_is_missing(tmp_path):
    config = load_config(tmp_path / "absent.yml")
    assert config.settings["cpu_cost_weight"] == 0.5
    assert config.settings["grace_days"] == 4
    assert config.settings["factor_min"] == 0.2 and config.settings["factor_max"] == 5.0
    assert config.settings["unassigned_policy"] == "separate"
    rules = {row["pool"]: row["rule"] for row in config.tables["distribution_rules"]}
    assert rules == {
        "platform": "keep",
        "infrastructure_idle": "keep",
        "workload_idle": "owner",
        "unattributed_storage": "keep",
        "unattributed_network": "keep",
    }


def test_valid_file_becomes_tables():
    config = parse_config(VALID)
    tags = config.tables["billing_link_tags"]
    assert [(t["tag_key_normalized"], t["tag_value"]) for t in tags] == [
        ("kubernetes_io_cluster_eks_prod", None),
        ("team", "payments"),
    ]
    assert config.tables["clusters"][0]["has_billing_link"] is True
    assert config.tables["clusters"][1]["has_billing_link"] is False
    mapping = config.tables["selector_mappings"][0]
    assert (mapping["selector_key"], mapping["operator"], mapping["label_values"]) == (
        "app",
        "in",
        "cart|checkout",
    )
    assert config.tables["rate_card"][1]["selector_type"] == "label"
    rules = {r["pool"]: r for r in config.tables["distribution_rules"]}
    assert rules["platform"]["rule"] == "proportional" and rules["platform"]["hybrid_share"] == 30
    assert rules["infrastructure_idle"]["rule"] == "fixed"
    assert sum(s["percent"] for s in config.tables["distribution_fixed_shares"]) == 100


def test_billing_link_cluster_arn_is_kept_in_lower_case():
    raw = {
        "clusters": [
            {
                "id": "prod",
                "provider": "aws",
                "billing_link": {
                    "accounts": ["222222222222"],
                    "cluster_arn": "arn:aws:eks:eu-west-1:222222222222:cluster/Main",
                },
            },
            {"id": "dc1", "provider": "on_prem"},
        ]
    }
    clusters = parse_config(raw).tables["clusters"]
    assert [c["cluster_arn"] for c in clusters] == [
        "arn:aws:eks:eu-west-1:222222222222:cluster/main",
        None,
    ]


def test_config_tables_are_written(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    write_config_tables(con, parse_config(VALID))
    assert con.execute("select count(*) from config.clusters").fetchone()[0] == 2
    assert con.execute("select currency from config.settings").fetchone()[0] == "EUR"
    write_config_tables(con, parse_config({}))
    assert con.execute("select count(*) from config.clusters").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("selector", "requirements"),
    [
        (
            "app.kubernetes.io/name in (cart, checkout)",
            [("app.kubernetes.io/name", "in", "cart|checkout")],
        ),
        ("name notin (x)", [("name", "notin", "x")]),
        ("name not in (x, y)", [("name", "notin", "x|y")]),
        ("squad=blue", [("squad", "in", "blue")]),
        ("squad == blue", [("squad", "in", "blue")]),
        ("tier != batch", [("tier", "notin", "batch")]),
        ("example.com/team", [("example.com/team", "exists", "")]),
        ("!legacy", [("legacy", "not_exists", "")]),
        (
            "app in (cart, checkout), tier != batch, !legacy",
            [
                ("app", "in", "cart|checkout"),
                ("tier", "notin", "batch"),
                ("legacy", "not_exists", ""),
            ],
        ),
    ],
)
def test_selectors_become_requirements_with_the_key_as_written(selector, requirements):
    """Keys are kept as written: dbt normalizes them like pod label keys (aliases included)."""
    config = parse_config(
        {"ownership": {"selector_mappings": [{"selector": selector, "team": "t", "cluster": "c"}]}}
    )
    rows = config.tables["selector_mappings"]
    assert [(r["selector_key"], r["operator"], r["label_values"]) for r in rows] == requirements
    assert [r["requirement_position"] for r in rows] == list(range(1, len(requirements) + 1))
    assert {(r["list_position"], r["team"], r["cluster_id"]) for r in rows} == {(1, "t", "c")}


@pytest.mark.parametrize(
    "selector",
    ["!app in (x)", "app in (x", "app in x", "app ~ x", "", "app in (x),", "a b", "appin (x)"],
)
def test_unreadable_selectors_name_the_key(selector):
    with pytest.raises(ConfigError, match=r"ownership.selector_mappings\[0\].selector"):
        parse_config({"ownership": {"selector_mappings": [{"selector": selector, "team": "t"}]}})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"clusters": [{"id": "a", "provider": "amazon"}]},
            "clusters[0].provider: 'amazon' is not one of aws, gcp, azure, focus, on_prem",
        ),
        ({"pricing": {"cpu_cost_weight": 0.7}}, "pricing.cpu_cost_weight"),
        ({"distribution": {"preset": "robin_hood"}}, "distribution.preset"),
        (
            {
                "distribution": {
                    "pools": {
                        "platform": {
                            "rule": "fixed",
                            "shares": [{"team": "a", "percent": 60}, {"team": "b", "percent": 30}],
                        }
                    }
                }
            },
            "distribution.pools.platform.shares: percentages sum to 90, not 100",
        ),
        (
            {"distribution": {"pools": {"platform": "owner"}}},
            "distribution.pools.platform.rule: 'owner' applies to workload_idle only",
        ),
        ({"close": {"unassigned_policy": "everyone"}}, "close.unassigned_policy"),
        (
            {"clusters": [{"id": "a", "provider": "aws", "billing_link": {"tags": "x"}}]},
            "clusters[0].billing_link.tags: expected list",
        ),
        (
            {"ownership": {"selector_mappings": [{"selector": "app in ()", "team": "x"}]}},
            "ownership.selector_mappings[0].selector",
        ),
        ({"clusterz": []}, "clusterz: unknown setting"),
        (
            {"clusters": [{"id": "a", "provider": "aws"}, {"id": "a", "provider": "gcp"}]},
            "clusters[1].id: cluster 'a' is listed twice",
        ),
        (
            {
                "clusters": [
                    {
                        "id": "a",
                        "provider": "aws",
                        "billing_link": {"accounts": ["1"], "cluster_arn": "cluster/a"},
                    }
                ]
            },
            "clusters[0].billing_link.cluster_arn: 'cluster/a' is no EKS cluster ARN",
        ),
    ],
)
def test_invalid_settings_name_the_key(raw, message):
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    assert message in str(error.value)


def test_exchange_rates_become_a_table_of_exact_rates(tmp_path):
    import datetime as dt
    from decimal import Decimal

    raw = {
        "currency": "USD",
        "exchange_rates": [
            {"from": "EUR", "to": "USD", "rate": 1.08, "effective_from": dt.date(2026, 10, 1)},
            {"from": "EUR", "rate": "1.12345678", "effective_from": "2026-10-15"},
            {"from": "GBP", "to": "USD", "rate": 1.27, "effective_from": "2026-10-01"},
        ],
    }
    rows = parse_config(raw).tables["exchange_rates"]
    assert rows == [
        {
            "from_currency": "EUR",
            "to_currency": "USD",
            "rate": Decimal("1.08"),
            "effective_from": dt.date(2026, 10, 1),
        },
        {
            "from_currency": "EUR",
            "to_currency": "USD",  # `to` defaults to the billing currency
            "rate": Decimal("1.12345678"),
            "effective_from": dt.date(2026, 10, 15),
        },
        {
            "from_currency": "GBP",
            "to_currency": "USD",
            "rate": Decimal("1.27"),
            "effective_from": dt.date(2026, 10, 1),
        },
    ]
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    write_config_tables(con, parse_config(raw))
    assert con.execute(
        "select from_currency, cast(rate as varchar), typeof(rate) from config.exchange_rates "
        "order by effective_from, from_currency"
    ).fetchall() == [
        ("EUR", "1.08000000", "DECIMAL(14,8)"),
        ("GBP", "1.27000000", "DECIMAL(14,8)"),
        ("EUR", "1.12345678", "DECIMAL(14,8)"),
    ]
    assert parse_config({}).tables["exchange_rates"] == []


RATE = {"from": "EUR", "to": "USD", "rate": 1.08, "effective_from": "2026-10-01"}


@pytest.mark.parametrize(
    ("rates", "message"),
    [
        ({"from": "EUR"}, "exchange_rates: expected list"),
        ([{**RATE, "rate": 0}], "exchange_rates[0].rate: 0 must be a positive number"),
        ([{**RATE, "rate": -1.08}], "exchange_rates[0].rate: -1.08 must be a positive number"),
        ([{**RATE, "rate": "abc"}], "exchange_rates[0].rate: expected a number, got 'abc'"),
        ([{**RATE, "rate": True}], "exchange_rates[0].rate: expected a number, got True"),
        (
            [{**RATE, "rate": 1.123456789}],
            "exchange_rates[0].rate: 1.123456789 must be below 1,000,000 with at most 8",
        ),
        (
            [{**RATE, "from": "eur"}],
            "exchange_rates[0].from: 'eur' is not an ISO 4217 code (three upper-case letters)",
        ),
        (
            [RATE, {**RATE, "from": "EURO"}],
            "exchange_rates[1].from: 'EURO' is not an ISO 4217 code",
        ),
        ([{**RATE, "to": "US"}], "exchange_rates[0].to: 'US' is not an ISO 4217 code"),
        (
            [{**RATE, "to": "GBP"}],
            "exchange_rates[0].to: GBP is not the billing currency (`currency: USD`)",
        ),
        ([{**RATE, "from": "USD"}], "exchange_rates[0].from: USD is the billing currency"),
        (
            [RATE, {**RATE, "rate": 1.1}],
            "exchange_rates[1]: duplicate of exchange_rates[0] (EUR to USD from 2026-10-01)",
        ),
        (
            [{**RATE, "effective_from": "October"}],
            "exchange_rates[0].effective_from: 'October' is not a date",
        ),
        ([{"from": "EUR", "rate": 1.08}], "exchange_rates[0].effective_from: required"),
        ([{**RATE, "until": "2026-11-01"}], "exchange_rates[0].until: unknown setting"),
    ],
)
def test_invalid_exchange_rates_name_the_key(rates, message):
    with pytest.raises(ConfigError) as error:
        parse_config({"exchange_rates": rates})
    assert message in str(error.value)
