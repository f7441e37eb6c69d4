"""`budgets:` in kubeledger.yml: monthly budgets per team, cost center or application, with the
same thresholds as the cloud-charge allocations' budgets (SPEC §10: one mechanism), and where
alerts go. Becomes the `config.owner_budgets` and `config.owner_budget_thresholds` tables;
`marts.fct_budget_status_daily` checks both kinds of budget every day.

```yaml
budgets:
  webhook_url: https://hooks.example.com/kubeledger   # optional: alerts are POSTed here as JSON
  owners:
    - {team: payments, monthly_budget: 1500, thresholds: [{percent: 80, use_estimated: true}]}
```
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from kubeledger.config_allocations import Amount, Currency, Text, Threshold
from kubeledger.config_base import Section, raise_problems

DIMENSIONS = ("team", "cost_center", "application")

BUDGET_TABLE_COLUMNS: dict[str, dict[str, str]] = {
    "owner_budgets": {
        "budget_name": "varchar",
        "owner_dimension": "varchar",
        "owner_value": "varchar",
        "currency": "varchar",
        "monthly_budget": "decimal(38, 2)",
        "list_position": "integer",
    },
    "owner_budget_thresholds": {
        "budget_name": "varchar",
        "threshold_percent": "double",
        "use_estimated": "boolean",
        "list_position": "integer",
    },
}


class OwnerBudget(Section):
    """A monthly budget for one team, cost center or application (exactly one of them)."""

    team: Text | None = Field(None, description="The team whose cost counts")
    cost_center: Text | None = Field(None, description="The cost center whose cost counts")
    application: Text | None = Field(None, description="The application whose cost counts")
    currency: Currency | None = Field(None, description="Default: the file's `currency`")
    monthly_budget: Amount = Field(description="Budget per month, 2 decimals")
    thresholds: list[Threshold] = Field(
        default_factory=list, description="Percentages of the budget that raise an alert"
    )

    @model_validator(mode="after")
    def _one_owner(self) -> OwnerBudget:
        found: list[tuple[str, str]] = []
        given = [name for name in DIMENSIONS if getattr(self, name) is not None]
        if len(given) != 1:
            found.append(
                (
                    "team",
                    "give exactly one of team, cost_center, application"
                    + (f" (got {', '.join(given)})" if given else ""),
                )
            )
        seen: set[tuple[float, bool]] = set()
        for j, threshold in enumerate(self.thresholds):
            identity = (threshold.percent, threshold.use_estimated)
            if identity in seen:
                found.append(
                    (f"thresholds[{j}]", f"the {threshold.percent:g}% threshold is listed twice")
                )
            seen.add(identity)
        raise_problems(found)
        return self

    @property
    def dimension(self) -> str:
        return next(name for name in DIMENSIONS if getattr(self, name) is not None)

    @property
    def name(self) -> str:
        return f"{self.dimension}:{getattr(self, self.dimension)}"


class Budgets(Section):
    """Owner budgets and where budget alerts (owners' and allocations') are sent."""

    webhook_url: Text | None = Field(
        None, description="POST a JSON message here when a budget threshold is crossed"
    )
    owners: list[OwnerBudget] = Field(default_factory=list)

    @model_validator(mode="after")
    def _distinct(self) -> Budgets:
        found: list[tuple[str, str]] = []
        if self.webhook_url is not None and not self.webhook_url.startswith(
            ("http://", "https://")
        ):
            found.append(("webhook_url", f"{self.webhook_url!r} is not an http(s) URL"))
        names: dict[str, int] = {}
        for i, budget in enumerate(self.owners):
            try:
                name = budget.name
            except StopIteration:
                continue
            if name in names:
                found.append(
                    (f"owners[{i}]", f"{name} already has a budget (owners[{names[name]}])")
                )
            names.setdefault(name, i)
        raise_problems(found)
        return self

    def tables(self, currency: str) -> dict[str, list[dict[str, Any]]]:
        tables: dict[str, list[dict[str, Any]]] = {name: [] for name in BUDGET_TABLE_COLUMNS}
        for i, budget in enumerate(self.owners, start=1):
            tables["owner_budgets"].append(
                {
                    "budget_name": budget.name,
                    "owner_dimension": budget.dimension,
                    "owner_value": getattr(budget, budget.dimension),
                    "currency": budget.currency or currency,
                    "monthly_budget": budget.monthly_budget,
                    "list_position": i,
                }
            )
            for j, threshold in enumerate(budget.thresholds, start=1):
                tables["owner_budget_thresholds"].append(
                    {
                        "budget_name": budget.name,
                        "threshold_percent": threshold.percent,
                        "use_estimated": threshold.use_estimated,
                        "list_position": j,
                    }
                )
        return tables
