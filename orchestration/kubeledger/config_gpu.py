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

from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from kubeledger.config_base import Section, number

DEFAULT_GPU_SHARE = 0.75  # the median GPU share of the shipped seed's instance types

GPU_TABLE_COLUMNS: dict[str, dict[str, str]] = {
    "gpu_cost_shares": {
        "list_position": "integer",
        "match_kind": "varchar",  # instance_type | gpu_model | default
        "match_value": "varchar",
        "gpu_share": "double",
    },
}


def _non_empty(text: str) -> str:
    if not text.strip():
        raise ValueError("expected a non-empty string")
    return text.strip()


MatchText = Annotated[str, AfterValidator(_non_empty)]


class GpuShare(Section):
    """One entry of `gpu.shares`: an instance type or a GPU model, and its GPU share."""

    instance_type: MatchText | None = Field(None, description="An instance type, exactly")
    gpu_model: MatchText | None = Field(
        None, description="A case-insensitive substring of the GPU's model name"
    )
    share: number(0, 1) = Field(description="The GPUs' part of the node's cost, 0-1")

    @model_validator(mode="after")
    def _one_match(self) -> GpuShare:
        if (self.instance_type is None) == (self.gpu_model is None):
            raise ValueError("give exactly one of instance_type or gpu_model")
        return self


class Gpu(Section):
    """How much of a GPU node's cost is its GPUs' (the rest is split by CPU and memory)."""

    default_share: number(0, 1) = Field(
        DEFAULT_GPU_SHARE, description="The GPU share of a GPU node nothing else prices"
    )
    shares: list[GpuShare] = Field(default_factory=list, description="First match wins")

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """The config tables of the section (every default when it is absent)."""
        rows: list[dict[str, Any]] = []
        for position, entry in enumerate(self.shares):
            kind = "instance_type" if entry.instance_type is not None else "gpu_model"
            rows.append(
                {
                    "list_position": position,
                    "match_kind": kind,
                    "match_value": getattr(entry, kind),
                    "gpu_share": float(entry.share),
                }
            )
        rows.append(
            {
                "list_position": len(rows),
                "match_kind": "default",
                "match_value": None,
                "gpu_share": float(self.default_share),
            }
        )
        return {"gpu_cost_shares": rows}
