"""Refuse Azure actual-cost exports: same header as the amortized export, different numbers.

An actual-cost file puts a reservation's or savings plan's purchase on its purchase day and shows
the usage it covers at (about) zero cost, so a reserved node would cost nothing and the month's
purchase would land on one day. kubeledger needs the amortized export (SPEC §3.2). The two are
told apart by the export's manifest where there is one, else by the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from kubeledger.load.errors import LoadError
from kubeledger.load.sql import ident

# Azure Cost Management export types (manifest.json `exportConfig.type`) that are actual cost;
# `Usage` is the older name of the actual-cost export.
_ACTUAL_TYPES = {"actualcost", "usage"}
_COMMITMENT_MODELS = "('reservation', 'savingsplan', 'savings plan')"

_FIX = (
    "kubeledger reads amortized cost: export 'Amortized cost (usage and purchases)' in Cost "
    "Management (Exports), put that file in the landing folder and remove this one."
)


def manifest_export_type(landing: Path, folder: Path) -> tuple[str, str] | None:
    """(manifest path relative to the landing folder, export type) of the nearest Azure export
    manifest in `folder` or a folder above it inside the landing folder, if any."""
    current = folder
    while True:
        for path in sorted(current.glob("*")):
            if path.is_file() and path.name.lower().endswith("manifest.json"):
                export_type = _export_type(path)
                if export_type is not None:
                    return path.relative_to(landing).as_posix(), export_type
        if current == landing or landing not in current.parents:
            return None
        current = current.parent


def _export_type(path: Path) -> str | None:
    try:
        content = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # not an Azure manifest (a koku manifest is read, and checked, elsewhere)
    if not isinstance(content, dict):
        return None
    config = {k.lower(): v for k, v in content.items()}.get("exportconfig")
    if not isinstance(config, dict):
        return None
    export_type = {k.lower(): v for k, v in config.items()}.get("type")
    return str(export_type) if export_type else None


def refuse_by_manifest(source_file: str, manifest: tuple[str, str] | None) -> None:
    if manifest is None:
        return
    manifest_file, export_type = manifest
    if export_type.lower() in _ACTUAL_TYPES:
        raise LoadError(
            source_file,
            f"is an Azure actual-cost export (its manifest {manifest_file} says type "
            f"{export_type}), not the amortized cost export.",
            fix=_FIX,
        )


def refuse_by_rows(
    con: duckdb.DuckDBPyConnection, stage: str, present: frozenset[str], source_file: str
) -> None:
    """LoadError when the staged rows of an Azure cost file are those of an actual-cost export:
    commitment purchases with a cost, or commitment-covered usage at zero cost."""
    if not {"ChargeType", "PricingModel"} <= present:
        return
    costs = [ident(c) for c in ("CostInBillingCurrency", "Cost") if c in present]
    if not costs:
        return
    cost = "coalesce(" + ", ".join(f"try_cast({c} as double)" for c in costs) + ")"
    quantity = 'try_cast("Quantity" as double)' if "Quantity" in present else "null"
    charge = 'lower(trim("ChargeType"))'
    model = f'lower(trim("PricingModel")) in {_COMMITMENT_MODELS}'
    purchases, covered, zero_covered, first_row = con.execute(
        f"""
        select
            count(*) filter (where {charge} = 'purchase' and {model} and {cost} <> 0),
            count(*) filter (where {charge} = 'usage' and {model} and {quantity} > 0),
            count(*) filter (where {charge} = 'usage' and {model} and {quantity} > 0
                and {cost} = 0),
            min(rowid) filter (where ({charge} = 'purchase' and {model} and {cost} <> 0)
                or ({charge} = 'usage' and {model} and {quantity} > 0 and {cost} = 0))
                - min(rowid) + 1
        from {stage}
        """
    ).fetchone()
    # An amortized export has no commitment purchase rows with a cost, and prices every
    # covered usage row; one zero here and there (rounding) is not an actual-cost file.
    if purchases == 0 and not (zero_covered > 0 and 2 * zero_covered >= covered):
        return
    found = []
    if purchases:
        found.append(f"{purchases:,} reservation or savings-plan purchase row(s) with a cost")
    if zero_covered:
        found.append(
            f"{zero_covered:,} of {covered:,} reservation or savings-plan usage rows at zero cost"
        )
    raise LoadError(
        source_file,
        f"is an Azure actual-cost export, not the amortized cost export ({'; '.join(found)}; "
        f"the first at row {first_row}): priced from it, reserved VMs would cost about nothing "
        "and purchases would land on their purchase day.",
        fix=_FIX,
    )
