"""`cloud_charges:` in kubeledger.yml: the tables it becomes, its defaults, and validation
messages that name the key (kubeledger.config_allocations)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest
import yaml

from kubeledger import config as kl_config
from kubeledger.config import Config, ConfigError
from kubeledger.config_allocations import (
    CLOUD_CHARGE_TABLE_COLUMNS,
    parse_cloud_charges,
    tag_key_match,
)

VALID_YAML = """
cloud_charges:
  tag_keys: {resource_group: pw-resource-group-id, deployment: pw-deployment-id,
             session: session-id, project: project, user: [user, owner]}
  allocations:
    - {name: Research, currency: USD, monthly_budget: 5000,
       thresholds: [{percent: 80, use_estimated: true}, {percent: 100}]}
    - {name: Ops, monthly_budget: 1250.50}
    - {name: Platform}
  reservations: [{reservation_id: "cr-0ABC123", allocation: Research}]
  resource_groups:
    - id: rg-42
      history:
        - {allocation: Research, effective_from: "2026-09-01T00:00:00Z"}
        - {allocation: Ops, effective_from: "2026-10-15T14:00:00+02:00"}
  deployments: [{id: dep-7, resource_group: rg-42, user: alice}]
  accounts:
    - {account_id: "111111111111", default_allocation: Ops, default_allocation_from: 2026-01-01,
       default_user: ops-bot}
    - {account_id: "222222222222", default_user: finance-bot}
  kubernetes: {attribute_cluster_to: {eks-prod: Platform}}
"""


def parse(text: str = VALID_YAML, cluster_ids: list[str] | None = None) -> dict[str, list]:
    return parse_cloud_charges(
        yaml.safe_load(text)["cloud_charges"],
        "EUR",
        cluster_ids if cluster_ids is not None else ["eks-prod"],
    )


def test_valid_section_becomes_tables():
    tables = parse()
    assert [
        (a["allocation_name"], a["currency"], a["monthly_budget"], a["list_position"])
        for a in tables["cloud_charge_allocations"]
    ] == [
        ("Research", "USD", Decimal("5000.00"), 1),
        ("Ops", "EUR", Decimal("1250.50"), 2),
        ("Platform", "EUR", None, 3),
    ]
    assert [
        (t["allocation_name"], t["threshold_percent"], t["use_estimated"])
        for t in tables["cloud_charge_thresholds"]
    ] == [("Research", 80.0, True), ("Research", 100.0, False)]
    users = [
        (k["tag_key"], k["list_position"])
        for k in tables["cloud_charge_tag_keys"]
        if k["tag_role"] == "user"
    ]
    assert users == [("user", 1), ("owner", 2)]
    assert tables["cloud_charge_reservations"] == [
        {
            "reservation_id": "cr-0ABC123",
            "reservation_key": "cr-0abc123",
            "allocation_name": "Research",
            "list_position": 1,
        }
    ]
    # +02:00 is converted to UTC: the change applies from 12:00Z.
    assert [
        (r["allocation_name"], r["effective_at"]) for r in tables["cloud_charge_resource_groups"]
    ] == [
        ("Research", dt.datetime(2026, 9, 1, 0, 0)),
        ("Ops", dt.datetime(2026, 10, 15, 12, 0)),
    ]
    assert tables["cloud_charge_deployments"] == [
        {"deployment_id": "dep-7", "resource_group_id": "rg-42", "user_name": "alice"}
    ]
    assert tables["cloud_charge_accounts"] == [
        {
            "account_id": "111111111111",
            "default_allocation_name": "Ops",
            "default_allocation_start_date": dt.date(2026, 1, 1),
            "default_user_name": "ops-bot",
        },
        {
            "account_id": "222222222222",
            "default_allocation_name": None,
            "default_allocation_start_date": None,
            "default_user_name": "finance-bot",
        },
    ]
    assert tables["cloud_charge_clusters"] == [
        {"cluster_id": "eks-prod", "allocation_name": "Platform"}
    ]
    assert tables["cloud_charge_settings"] == [
        {"estimate_window_days": 7, "default_user_name": None}
    ]


def test_defaults_when_the_section_is_missing():
    tables = parse_cloud_charges(None)
    assert set(tables) == set(CLOUD_CHARGE_TABLE_COLUMNS)
    assert {(k["tag_role"], k["tag_key_match"]) for k in tables["cloud_charge_tag_keys"]} == {
        ("resource_group", "pwresourcegroupid"),
        ("deployment", "pwdeploymentid"),
        ("session", "sessionid"),
        ("project", "project"),
        ("user", "user"),
        ("user", "owner"),
    }
    assert tables["cloud_charge_allocations"] == []
    assert tables["cloud_charge_settings"] == [
        {"estimate_window_days": 7, "default_user_name": None}
    ]


def test_a_default_allocation_without_start_applies_from_the_beginning():
    tables = parse_cloud_charges(
        {
            "allocations": [{"name": "Ops"}],
            "accounts": [{"account_id": "1", "default_allocation": "Ops"}],
        }
    )
    assert tables["cloud_charge_accounts"][0]["default_allocation_start_date"] == dt.date(
        1970, 1, 1
    )


@pytest.mark.parametrize(
    ("spelling", "match"),
    [
        ("pw-resource-group-id", "pwresourcegroupid"),
        ("user:PWResourceGroupID", "pwresourcegroupid"),
        ("user_pw_resource_group_id", "pwresourcegroupid"),
        ("SessionID", "sessionid"),
        ("Project", "project"),
    ],
)
def test_tag_keys_match_across_aws_spellings(spelling, match):
    assert tag_key_match(spelling) == match


def test_tables_load_into_duckdb(tmp_path, monkeypatch):
    monkeypatch.setattr(
        kl_config, "TABLE_COLUMNS", {**kl_config.TABLE_COLUMNS, **CLOUD_CHARGE_TABLE_COLUMNS}
    )
    config = kl_config.parse_config({})
    config = Config(source=None, settings=config.settings, tables={**config.tables, **parse()})
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    kl_config.write_config_tables(con, config)
    assert con.execute(
        "select monthly_budget, typeof(monthly_budget) from config.cloud_charge_allocations "
        "where allocation_name = 'Ops'"
    ).fetchone() == (Decimal("1250.50"), "DECIMAL(38,2)")
    assert con.execute(
        "select max(effective_at) from config.cloud_charge_resource_groups"
    ).fetchone()[0] == (dt.datetime(2026, 10, 15, 12, 0))
    assert con.execute("select count(*) from config.cloud_charge_tag_keys").fetchone()[0] == 6


@pytest.mark.skipif(
    not set(CLOUD_CHARGE_TABLE_COLUMNS) <= set(kl_config.TABLE_COLUMNS),
    reason="cloud_charges is not wired into kubeledger.config.parse_config yet",
)
def test_parse_config_reads_the_cloud_charges_section(tmp_path):
    config = kl_config.parse_config(
        yaml.safe_load(VALID_YAML) | {"clusters": [{"id": "eks-prod", "provider": "aws"}]}
    )
    assert len(config.tables["cloud_charge_allocations"]) == 3
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    kl_config.write_config_tables(con, config)
    assert con.execute("select count(*) from config.cloud_charge_accounts").fetchone()[0] == 2
    with pytest.raises(ConfigError, match="cloud_charges.kubernetes.attribute_cluster_to.gke"):
        kl_config.parse_config(
            {
                "cloud_charges": {
                    "allocations": [{"name": "A"}],
                    "kubernetes": {"attribute_cluster_to": {"gke": "A"}},
                }
            }
        )


ALLOCATIONS = [{"name": "Research", "monthly_budget": 100}, {"name": "Ops"}]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"allocation": []}, "cloud_charges.allocation: unknown setting"),
        ({"allocations": {"name": "x"}}, "cloud_charges.allocations: expected a list"),
        (
            {"allocations": [{"name": ""}]},
            "cloud_charges.allocations[0].name: expected a non-empty text",
        ),
        (
            {"allocations": [{"name": "A"}, {"name": "A"}]},
            "cloud_charges.allocations[1].name: allocation 'A' is listed twice",
        ),
        (
            {"allocations": [{"name": "A", "currency": "usd"}]},
            "cloud_charges.allocations[0].currency: 'usd' is not a currency code",
        ),
        (
            {"allocations": [{"name": "A", "monthly_budget": -5}]},
            "cloud_charges.allocations[0].monthly_budget: expected an amount of 0 or more",
        ),
        (
            {"allocations": [{"name": "A", "monthly_budget": 10.005}]},
            "cloud_charges.allocations[0].monthly_budget: 10.005 has more than 2 decimals",
        ),
        (
            {"allocations": [{"name": "A", "thresholds": [{"percent": 80}]}]},
            "cloud_charges.allocations[0].thresholds: thresholds need a monthly_budget",
        ),
        (
            {"allocations": [{"name": "A", "monthly_budget": 1, "thresholds": [{"percent": 0}]}]},
            "cloud_charges.allocations[0].thresholds[0].percent: 0 is outside (0, 1000]",
        ),
        (
            {
                "allocations": [
                    {
                        "name": "A",
                        "monthly_budget": 1,
                        "thresholds": [{"percent": 80, "use_estimated": "yes"}],
                    }
                ]
            },
            "cloud_charges.allocations[0].thresholds[0].use_estimated: expected true or false",
        ),
        (
            {
                "allocations": [
                    {
                        "name": "A",
                        "monthly_budget": 1,
                        "thresholds": [{"percent": 80}, {"percent": 80}],
                    }
                ]
            },
            "cloud_charges.allocations[0].thresholds[1]: the 80% threshold is listed twice",
        ),
        ({"tag_keys": {"team": "team"}}, "cloud_charges.tag_keys.team: unknown setting"),
        ({"tag_keys": {"user": []}}, "cloud_charges.tag_keys.user: give at least one tag key"),
        (
            {"tag_keys": {"project": "user"}},
            "cloud_charges.tag_keys.user: 'user' is already the project tag key",
        ),
        (
            {"tag_keys": {"user": ["owner", "Owner"]}},
            "cloud_charges.tag_keys.user[1]: 'Owner' is the same key as 'owner'",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "reservations": [{"reservation_id": "cr-1", "allocation": "research"}],
            },
            "cloud_charges.reservations[0].allocation: 'research' is not an allocation "
            "(allocations: Ops, Research); did you mean 'Research'?",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "reservations": [
                    {"reservation_id": "cr-1", "allocation": "Ops"},
                    {"reservation_id": "CR-1", "allocation": "Research"},
                ],
            },
            "cloud_charges.reservations[1].reservation_id: 'CR-1' is already mapped by "
            "cloud_charges.reservations[0]",
        ),
        (
            {"allocations": ALLOCATIONS, "resource_groups": [{"id": "rg-1", "history": []}]},
            "cloud_charges.resource_groups[0].history: give at least one",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "resource_groups": [
                    {
                        "id": "rg-1",
                        "history": [{"allocation": "Ops", "effective_from": "mid-October"}],
                    }
                ],
            },
            "cloud_charges.resource_groups[0].history[0].effective_from: 'mid-October' is not a "
            "timestamp",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "resource_groups": [
                    {
                        "id": "rg-1",
                        "history": [
                            {"allocation": "Ops", "effective_from": "2026-10-15T12:00:00Z"},
                            {"allocation": "Research", "effective_from": "2026-10-01T00:00:00Z"},
                        ],
                    }
                ],
            },
            "cloud_charges.resource_groups[0].history[1].effective_from: 2026-10-01T00:00:00Z is "
            "not after the previous change",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "resource_groups": [
                    {"id": "rg-1", "history": [{"allocation": "Ops"}]},
                    {"id": "rg-1", "history": [{"allocation": "Ops"}]},
                ],
            },
            "cloud_charges.resource_groups[1].id: resource group 'rg-1' is listed twice",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "deployments": [{"id": "dep-1", "resource_group": "rg-9"}],
            },
            "cloud_charges.deployments[0].resource_group: 'rg-9' is not in "
            "cloud_charges.resource_groups",
        ),
        (
            {"deployments": [{"id": "dep-1"}]},
            "cloud_charges.deployments[0]: give resource_group, user or both",
        ),
        (
            {"accounts": [{"account_id": 111111111111}]},
            "cloud_charges.accounts[0].account_id: expected a non-empty text, got 111111111111 "
            "(quote it)",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "accounts": [{"account_id": "1", "default_allocation": "Nope"}],
            },
            "cloud_charges.accounts[0].default_allocation: 'Nope' is not an allocation",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "accounts": [{"account_id": "1", "default_allocation_from": "2026-01-01"}],
            },
            "cloud_charges.accounts[0].default_allocation_from: only used with default_allocation",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "accounts": [
                    {
                        "account_id": "1",
                        "default_allocation": "Ops",
                        "default_allocation_from": "January",
                    }
                ],
            },
            "cloud_charges.accounts[0].default_allocation_from: 'January' is not a date",
        ),
        (
            {
                "accounts": [
                    {"account_id": "1", "default_user": "a"},
                    {"account_id": "1", "default_user": "b"},
                ]
            },
            "cloud_charges.accounts[1].account_id: account '1' is listed twice",
        ),
        (
            {"allocations": ALLOCATIONS, "kubernetes": {"attribute_cluster_to": {"aks-x": "Ops"}}},
            "cloud_charges.kubernetes.attribute_cluster_to.aks-x: no such cluster in clusters",
        ),
        (
            {
                "allocations": ALLOCATIONS,
                "kubernetes": {"attribute_cluster_to": {"eks-prod": "Finance"}},
            },
            "cloud_charges.kubernetes.attribute_cluster_to.eks-prod: 'Finance' is not an "
            "allocation",
        ),
        (
            {"kubernetes": {"chargeback": False}},
            "cloud_charges.kubernetes.chargeback: unknown setting",
        ),
        (
            {"estimate_window_days": 0},
            "cloud_charges.estimate_window_days: expected a whole number of days from 1 to 31",
        ),
    ],
)
def test_invalid_settings_name_the_key(section, message):
    with pytest.raises(ConfigError) as error:
        parse_cloud_charges(section, "USD", ["eks-prod"])
    assert message in str(error.value)
