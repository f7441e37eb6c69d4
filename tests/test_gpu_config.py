"""The `gpu:` section of kubeledger.yml: defaults, list order, and errors that name the key."""

from __future__ import annotations

import re

import pytest

from kubeledger.config import ConfigError, parse_config


def _shares(raw: dict) -> list[dict]:
    return parse_config(raw).tables["gpu_cost_shares"]


def test_without_a_gpu_section_only_the_default_share():
    assert _shares({}) == [
        {"list_position": 0, "match_kind": "default", "match_value": None, "gpu_share": 0.75}
    ]


def test_entries_keep_their_order_and_the_default_comes_last():
    rows = _shares(
        {
            "gpu": {
                "default_share": 0.6,
                "shares": [
                    {"gpu_model": "A100", "share": 0.7},
                    {"instance_type": " p5.48xlarge ", "share": 1},
                ],
            }
        }
    )
    assert [(r["match_kind"], r["match_value"], r["gpu_share"]) for r in rows] == [
        ("gpu_model", "A100", 0.7),
        ("instance_type", "p5.48xlarge", 1.0),
        ("default", None, 0.6),
    ]


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"default_share": 1.5}, "gpu.default_share"),
        ({"shares": [{"gpu_model": "A100", "share": -0.1}]}, "gpu.shares[0].share"),
        ({"shares": [{"gpu_model": "A100"}]}, "gpu.shares[0].share"),
        ({"shares": [{"gpu_model": "A100", "instance_type": "x", "share": 0.5}]}, "gpu.shares[0]"),
        ({"shares": [{"share": 0.5}]}, "gpu.shares[0]"),
        ({"shares": [{"gpu_model": "A100", "share": 0.5, "note": 1}]}, "gpu.shares[0].note"),
        ({"share": 0.5}, "gpu.share"),
    ],
)
def test_an_invalid_setting_names_its_key(section, key):
    with pytest.raises(ConfigError, match="^" + re.escape(key + ":")):
        parse_config({"gpu": section})
