"""The `gpu:` section of kubeledger.yml: the GPU part of a GPU node's cost (SPEC §5).

```yaml
gpu:
  default_share: 0.75          # a GPU node the list below and the shipped seed do not know
  shares:                      # first match wins: instance types, then GPU models in list order
    - {instance_type: p4d.24xlarge, share: 0.8}
    - {gpu_model: A100, share: 0.7}   # case-insensitive substring of the GPU's model name
```

A node's GPU share is, in order: its instance type's entry here, the first `gpu_model` entry
its GPU's model name contains, the shipped seed `gpu_instance_types` (the GPUs' share of the
instance's list price), else `default_share`. It is written to `config.gpu_cost_shares`, one
row per entry plus one `default` row.
"""

from __future__ import annotations

from typing import Any

DEFAULT_GPU_SHARE = 0.75  # the median GPU share of the shipped seed's instance types

GPU_TABLE_COLUMNS: dict[str, dict[str, str]] = {
    "gpu_cost_shares": {
        "list_position": "integer",
        "match_kind": "varchar",  # instance_type | gpu_model | default
        "match_value": "varchar",
        "gpu_share": "double",
    },
}


class GpuConfigError(ValueError):
    """An invalid `gpu:` setting; the message names the key."""


def _share(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GpuConfigError(f"{key}: expected a number between 0 and 1, got {value!r}")
    if not 0 <= value <= 1:
        raise GpuConfigError(f"{key}: must be between 0 and 1 (got {value})")
    return float(value)


def parse_gpu(raw: Any) -> dict[str, list[dict[str, Any]]]:
    """The config tables of the `gpu:` section (every default when it is absent)."""
    section = raw or {}
    if not isinstance(section, dict):
        raise GpuConfigError("gpu: expected a mapping")
    unknown = set(section) - {"default_share", "shares"}
    if unknown:
        raise GpuConfigError(f"gpu.{sorted(unknown)[0]}: unknown setting")
    rows: list[dict[str, Any]] = []
    entries = section.get("shares") or []
    if not isinstance(entries, list):
        raise GpuConfigError("gpu.shares: expected a list")
    for position, entry in enumerate(entries):
        key = f"gpu.shares[{position}]"
        if not isinstance(entry, dict):
            raise GpuConfigError(f"{key}: expected a mapping")
        kinds = [kind for kind in ("instance_type", "gpu_model") if kind in entry]
        extra = set(entry) - {"instance_type", "gpu_model", "share"}
        if extra:
            raise GpuConfigError(f"{key}.{sorted(extra)[0]}: unknown setting")
        if len(kinds) != 1:
            raise GpuConfigError(f"{key}: give exactly one of instance_type or gpu_model")
        value = entry[kinds[0]]
        if not isinstance(value, str) or not value.strip():
            raise GpuConfigError(f"{key}.{kinds[0]}: expected a non-empty string")
        if "share" not in entry:
            raise GpuConfigError(f"{key}.share: missing")
        rows.append(
            {
                "list_position": position,
                "match_kind": kinds[0],
                "match_value": value.strip(),
                "gpu_share": _share(entry["share"], f"{key}.share"),
            }
        )
    default = _share(section.get("default_share", DEFAULT_GPU_SHARE), "gpu.default_share")
    rows.append(
        {
            "list_position": len(rows),
            "match_kind": "default",
            "match_value": None,
            "gpu_share": default,
        }
    )
    return {"gpu_cost_shares": rows}
