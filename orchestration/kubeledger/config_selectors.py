"""Kubernetes label selectors as kubeledger.yml's ownership mappings write them
(`app in (cart, checkout), tier != batch, !legacy`), read into requirements."""

from __future__ import annotations

import re
from typing import Any

# One requirement of a Kubernetes label selector: `key in (a, b)`, `key notin (a)`,
# `key = a` / `key == a`, `key != a`, `key` (exists) or `!key` (does not exist).
REQUIREMENT_RE = re.compile(
    r"^\s*(?P<negated>!)?\s*(?P<key>[A-Za-z0-9_./-]+)"
    r"(?:\s+(?P<op>in|notin|not in)\s*\((?P<values>[^()]*)\)"
    r"|\s*(?P<eq>==?|!=)\s*(?P<value>[^\s,()!=]+))?\s*$"
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


def parse_selector(text: Any) -> list[tuple[str, str, str]]:
    """A label selector as (raw key, operator, pipe-joined values) requirements, all of which
    must hold (Kubernetes semantics). The key is kept as written: dbt normalizes it with the
    rule pod label keys go through (`label_key_mapping`), aliases and DNS prefixes included.
    Operators: in, notin (also a pod without the key), exists, not_exists."""
    hint = (
        "use `key in (a, b)`, `key notin (a)`, `key=value`, `key!=value`, `key` or `!key`, "
        "requirements joined by commas"
    )
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"cannot read selector {text!r} ({hint})")
    requirements = []
    for part in _split_requirements(text):
        match = REQUIREMENT_RE.match(part)
        if not match or (match["negated"] and (match["op"] or match["eq"])):
            raise ValueError(f"cannot read selector {text!r} ({hint})")
        raw_key = match["key"]
        if match["op"]:
            values = [v.strip() for v in match["values"].split(",") if v.strip()]
            if not values:
                raise ValueError(f"selector {text!r} lists no values")
            operator = "in" if match["op"] == "in" else "notin"
            requirements.append((raw_key, operator, "|".join(values)))
        elif match["eq"]:
            operator = "notin" if match["eq"] == "!=" else "in"
            requirements.append((raw_key, operator, match["value"]))
        else:
            requirements.append((raw_key, "not_exists" if match["negated"] else "exists", ""))
    return requirements
