"""Seeded, stable pseudo-randomness for the fleet model (never Python's salted `hash`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

# Kubernetes' own alphabet for generated name suffixes (no vowels, no look-alikes).
K8S_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


class Rand:
    """Every value is a pure function of the seed and the parts naming it."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def _digest(self, size: int, parts: tuple) -> bytes:
        text = repr((self.seed, *parts)).encode()
        return hashlib.blake2b(text, digest_size=size).digest()

    def u64(self, *parts: object) -> int:
        return int.from_bytes(self._digest(8, parts), "big")

    def unit(self, *parts: object) -> float:
        """A float in [0, 1)."""
        return self.u64(*parts) / 2**64

    def randint(self, low: int, high: int, *parts: object) -> int:
        """An int in [low, high]."""
        return low + self.u64(*parts) % (high - low + 1)

    def pick(self, choices: Sequence, *parts: object):
        return choices[self.u64(*parts) % len(choices)]

    def hex(self, length: int, *parts: object) -> str:
        return self._digest((length + 1) // 2, parts).hex()[:length]

    def chars(self, length: int, alphabet: str, *parts: object) -> str:
        value = int.from_bytes(self._digest(16, parts), "big")
        out = []
        for _ in range(length):
            value, index = divmod(value, len(alphabet))
            out.append(alphabet[index])
        return "".join(out)

    def uuid(self, *parts: object) -> str:
        digits = self.hex(32, "uuid", *parts)
        digits = digits[:12] + "4" + digits[13:16] + "8" + digits[17:]
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"

    def digits(self, length: int, *parts: object) -> str:
        return str(self.u64(*parts) % 10**length).zfill(length)


def base36(value: int, width: int) -> str:
    """AKS writes a scale-set instance index as base-36 digits, zero padded."""
    out = ""
    while value:
        value, rest = divmod(value, 36)
        out = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + out
    return out.rjust(width, "0")


def label_string(labels: dict[str, str]) -> str:
    """Labels the way the operator writes them: sanitized keys, sorted, `|`-separated."""
    pairs = sorted((sanitize(key), value) for key, value in labels.items())
    return "|".join(f"label_{key}:{value}" for key, value in pairs)


@lru_cache(maxsize=4096)
def sanitize(key: str) -> str:
    """Prometheus label-name sanitizing, as kube-state-metrics applies it."""
    return re.sub(r"[^A-Za-z0-9_]", "_", key)
