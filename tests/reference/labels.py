"""Label keys, label selectors and generated-looking values (SPEC §6)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_ALIASES = {"name": "app", "part_of": "application"}
# SPEC silent on the default DNS prefix list; README says (labels.dns_prefixes) the defaults
# are app.kubernetes.io, kubernetes.io and k8s.io, and the user's own are added.
DEFAULT_DNS_PREFIXES = ["app.kubernetes.io", "kubernetes.io", "k8s.io"]

_SEPARATORS = re.compile(r"[-. ]")
_GENERATED = [
    re.compile(r"^[0-9a-f]{8,}$"),
    re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I),
    re.compile(r"^.+-[a-z0-9]{9,10}$"),  # a trailing pod-template hash after a name
    re.compile(r"[0-9]{6,}"),
]


def looks_generated(value: str) -> bool:
    return any(pattern.search(value) for pattern in _GENERATED)


@dataclass(frozen=True)
class KeyRule:
    """The one shared rule that normalizes pod, namespace and selector label keys."""

    aliases: tuple[tuple[str, str], ...]
    sanitized_prefixes: tuple[str, ...]  # e.g. app_kubernetes_io_, longest first

    @classmethod
    def from_config(cls, config: dict) -> KeyRule:
        labels = config.get("labels") or {}
        prefixes = DEFAULT_DNS_PREFIXES + list(labels.get("dns_prefixes") or [])
        sanitized = sorted(
            {_SEPARATORS.sub("_", p.lower().rstrip("/")) + "_" for p in prefixes},
            key=lambda p: (-len(p), p),
        )
        aliases = dict(DEFAULT_ALIASES)
        for alias, canonical in (labels.get("aliases") or {}).items():
            rule = cls((), tuple(sanitized))
            aliases[rule.fold(str(alias))[0]] = rule.fold(str(canonical))[0]
        return cls(tuple(sorted(aliases.items())), tuple(sanitized))

    def fold(self, raw_key: str) -> tuple[str, bool]:
        """(normalized key before aliases, whether it needed rewriting beyond `label_`)."""
        key = raw_key.strip()
        if key.startswith("label_"):  # the Prometheus transport prefix, not a rewrite
            key = key[len("label_") :]
        original = key
        key = key.lower()
        if "/" in key:
            key = key.rsplit("/", 1)[1]
        else:
            for prefix in self.sanitized_prefixes:
                match = re.match(r"^(?:[a-z0-9_]*_)?" + re.escape(prefix), key)
                if match and len(match.group(0)) < len(key):
                    key = key[match.end() :]
                    break
        key = _SEPARATORS.sub("_", key)
        return key, key != original

    @lru_cache(maxsize=100_000)  # noqa: B019 - the rule is frozen and lives as long as a run
    def normalize(self, raw_key: str) -> tuple[str, bool]:
        key, rewritten = self.fold(raw_key)
        alias = dict(self.aliases).get(key)
        if alias is not None:
            return alias, True
        return key, rewritten


def parse_labels(text: str, rule: KeyRule) -> dict[str, str]:
    """`label_app:checkout|label_team:payments` to normalized keys, conflicts resolved: the
    raw key that needed no rewriting wins, then the alphabetically first raw key."""
    if not text:
        return {}
    candidates: dict[str, tuple[bool, str, str]] = {}
    for part in text.split("|"):
        if not part:
            continue
        raw_key, _, value = part.partition(":")
        if not raw_key:
            continue
        key, rewritten = rule.normalize(raw_key)
        candidate = (rewritten, raw_key, value)
        if key not in candidates or candidate < candidates[key]:
            candidates[key] = candidate
    return {key: value for key, (_, _, value) in candidates.items()}


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # equals, not_equals, in, notin, exists, not_exists
    values: tuple[str, ...]

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "not_exists":
            return not present
        if self.operator in ("equals", "in"):
            return present and labels[self.key] in self.values
        # notin and != match a pod without the key
        return not present or labels[self.key] not in self.values


_IN = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)\s*$", re.I)
_CMP = re.compile(r"^\s*([^\s!=(),]+)\s*(==|!=|=)\s*([^\s,]*)\s*$")
_NOT = re.compile(r"^\s*!\s*([^\s!=(),]+)\s*$")
_HAS = re.compile(r"^\s*([^\s!=(),]+)\s*$")


def parse_selector(selector: str, rule: KeyRule) -> tuple[Requirement, ...]:
    """A Kubernetes label selector; comma-separated requirements all have to match."""
    parts, depth, current = [], 0, ""
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    requirements = []
    for part in parts:
        if match := _IN.match(part):
            values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
            if not values:
                raise ValueError(f"selector {selector!r}: empty value list")
            operator = match.group(2).lower()
            requirements.append(Requirement(rule.normalize(match.group(1))[0], operator, values))
        elif match := _CMP.match(part):
            operator = "not_equals" if match.group(2) == "!=" else "equals"
            key = rule.normalize(match.group(1))[0]
            requirements.append(Requirement(key, operator, (match.group(3),)))
        elif match := _NOT.match(part):
            requirements.append(Requirement(rule.normalize(match.group(1))[0], "not_exists", ()))
        elif match := _HAS.match(part):
            key = match.group(1)
            if key.lower() == "exists":
                raise ValueError(f"selector {selector!r}")
            requirements.append(Requirement(rule.normalize(key)[0], "exists", ()))
        else:
            # `key exists` (the config table's operator name) is accepted too
            words = part.split()
            if len(words) == 2 and words[1].lower() == "exists":
                requirements.append(Requirement(rule.normalize(words[0])[0], "exists", ()))
            else:
                raise ValueError(f"selector {selector!r}: cannot read {part!r}")
    return tuple(requirements)


def selector_matches(requirements: tuple[Requirement, ...], labels: dict[str, str]) -> bool:
    return all(requirement.matches(labels) for requirement in requirements)
