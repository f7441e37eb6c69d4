"""`cloud_charges:` in kubeledger.yml: budget allocations and the rules that attribute cloud
bill lines to them (SPEC §10), as pydantic models, and the rows of the `config.cloud_charge_*`
tables they become (docs/config-tables.md).

`parse_cloud_charges` returns one list of rows per table, every table present (empty when the
YAML leaves it out); `CLOUD_CHARGE_TABLE_COLUMNS` gives their DuckDB column types. Invalid
settings raise `ConfigError` naming every key, e.g.
`cloud_charges.reservations[0].allocation: 'Reserch' is not an allocation (allocations:
Ops, Research)`.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from kubeledger.config_base import ConfigError, Section, problems, raise_problems, validate

SECTION = "cloud_charges"
TAG_ROLES = ("resource_group", "deployment", "session", "project", "user")
DEFAULT_TAG_KEYS: dict[str, list[str]] = {
    "resource_group": ["pw-resource-group-id"],
    "deployment": ["pw-deployment-id"],
    "session": ["session-id"],
    "project": ["project"],
    "user": ["user", "owner"],
}
DEFAULT_ESTIMATE_WINDOW_DAYS = 7
BEGINNING = dt.datetime(1970, 1, 1)
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")

# Column name -> DuckDB type, per config table (docs/config-tables.md).
CLOUD_CHARGE_TABLE_COLUMNS: dict[str, dict[str, str]] = {
    "cloud_charge_allocations": {
        "allocation_name": "varchar",
        "currency": "varchar",
        "monthly_budget": "decimal(38, 2)",
        "list_position": "integer",
    },
    "cloud_charge_thresholds": {
        "allocation_name": "varchar",
        "threshold_percent": "double",
        "use_estimated": "boolean",
        "list_position": "integer",
    },
    "cloud_charge_tag_keys": {
        "tag_role": "varchar",
        "tag_key": "varchar",
        "tag_key_match": "varchar",
        "list_position": "integer",
    },
    "cloud_charge_reservations": {
        "reservation_id": "varchar",
        "reservation_key": "varchar",
        "allocation_name": "varchar",
        "list_position": "integer",
    },
    "cloud_charge_resource_groups": {
        "resource_group_id": "varchar",
        "allocation_name": "varchar",
        "effective_at": "timestamp",
        "list_position": "integer",
    },
    "cloud_charge_deployments": {
        "deployment_id": "varchar",
        "resource_group_id": "varchar",
        "user_name": "varchar",
    },
    "cloud_charge_accounts": {
        "account_id": "varchar",
        "default_allocation_name": "varchar",
        "default_allocation_start_date": "date",
        "default_user_name": "varchar",
    },
    "cloud_charge_clusters": {"cluster_id": "varchar", "allocation_name": "varchar"},
    "cloud_charge_settings": {"estimate_window_days": "integer", "default_user_name": "varchar"},
}


def tag_key_match(key: str) -> str:
    """The form a tag key is matched in: lower case, a leading `user:` / `user_` dropped, only
    letters and digits kept, so `pw-resource-group-id`, `PWResourceGroupID` and
    `user:pw_resource_group_id` are one key. The SQL side removes the `_` of the billing
    lines' `tag_key_normalized`, which is the same rule."""
    key = key.strip().lower()
    for prefix in ("user:", "user_"):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    return re.sub(r"[^a-z0-9]", "", key)


# --- value types ------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        raise ValueError(
            f"expected a non-empty text, got {value!r}{' (quote it)' if number else ''}"
        )
    if value != value.strip():
        raise ValueError(f"{value!r} has leading or trailing spaces")
    return value


def _amount(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValueError(f"expected an amount, got {value!r}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"expected an amount, got {value!r}") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"expected an amount of 0 or more, got {value!r}")
    if amount != amount.quantize(Decimal("0.01")):
        raise ValueError(f"{value!r} has more than 2 decimals")
    return amount.quantize(Decimal("0.01"))


def _percent(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    if not 0 < value <= 1000:
        raise ValueError(f"{value} is outside (0, 1000]")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _timestamp(value: Any) -> dt.datetime:
    """A UTC timestamp: ISO 8601 with `Z` or an offset (converted to UTC), without one (read
    as UTC), or a bare date (its midnight UTC)."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    else:
        try:
            moment = dt.datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise ValueError(f"{value!r} is not a timestamp (e.g. 2026-10-15T12:00:00Z)") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


def _date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        raise ValueError(f"{value!r} is not a date (YYYY-MM-DD)")
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{value!r} is not a date (YYYY-MM-DD)") from None


def _currency(value: Any) -> str:
    value = _text(value)
    if not CURRENCY_RE.match(value):
        raise ValueError(f"{value!r} is not a currency code such as USD")
    return value


def _window(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 31:
        raise ValueError(f"expected a whole number of days from 1 to 31, got {value!r}")
    return value


def _key_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(_text), Field(min_length=1)]
Amount = Annotated[Decimal, BeforeValidator(_amount), Field(ge=0, decimal_places=2)]
Percent = Annotated[float, BeforeValidator(_percent), Field(gt=0, le=1000)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Timestamp = Annotated[dt.datetime, BeforeValidator(_timestamp)]
Date = Annotated[dt.date, BeforeValidator(_date)]
Currency = Annotated[str, BeforeValidator(_currency), Field(pattern=CURRENCY_RE.pattern)]
TagKeyList = Annotated[list[Text], BeforeValidator(_key_list)]


# --- the section ------------------------------------------------------------------------------


def _keys(role: str, description: str) -> Any:
    return Field(
        default_factory=lambda: list(DEFAULT_TAG_KEYS[role]),
        description=f"{description} (one key or a list; default {DEFAULT_TAG_KEYS[role]})",
    )


class TagKeys(Section):
    """The tag keys each rule reads; AWS spellings (`user:`, `_` or `-`, case) match alike."""

    resource_group: TagKeyList = _keys("resource_group", "Tag naming a resource group (rule 2)")
    deployment: TagKeyList = _keys("deployment", "Tag naming a deployment (rule 3)")
    session: TagKeyList = _keys(
        "session", "Tag naming a deployment when the deployment tag is not set"
    )
    project: TagKeyList = _keys("project", "Legacy tag equal to an allocation's name (rule 4)")
    user: TagKeyList = _keys("user", "Tags naming the user on a cost record, in order")

    @model_validator(mode="after")
    def _distinct(self) -> TagKeys:
        found: list[tuple[str, str]] = []
        owners: dict[str, str] = {}
        for role in TAG_ROLES:
            keys = getattr(self, role)
            if not keys:
                found.append((role, "give at least one tag key"))
            seen: dict[str, str] = {}
            for position, tag_key in enumerate(keys):
                path = f"{role}[{position}]" if len(keys) > 1 else role
                match = tag_key_match(tag_key)
                if not match:
                    found.append((path, f"{tag_key!r} has no letter or digit"))
                elif match in seen:
                    found.append((path, f"{tag_key!r} is the same key as {seen[match]!r}"))
                else:
                    seen[match] = tag_key
                    other = owners.setdefault(match, role)
                    if other != role:
                        found.append((role, f"{tag_key!r} is already the {other} tag key"))
        raise_problems(found)
        return self


class Threshold(Section):
    percent: Percent = Field(description="Percent of the monthly budget, in (0, 1000]")
    use_estimated: Flag = Field(
        False, description="Compare the month's estimated cost instead of the used cost"
    )


class Allocation(Section):
    """A budget allocation: cloud charges attributed to it count against its budget."""

    name: Text = Field(description="The allocation's name, unique")
    currency: Currency | None = Field(None, description="Default: the file's `currency`")
    monthly_budget: Amount | None = Field(None, description="Budget per month, 2 decimals")
    thresholds: list[Threshold] = Field(default_factory=list)

    @model_validator(mode="after")
    def _thresholds(self) -> Allocation:
        found: list[tuple[str, str]] = []
        if self.thresholds and self.monthly_budget is None:
            found.append(("thresholds", "thresholds need a monthly_budget"))
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


class Reservation(Section):
    reservation_id: Text = Field(
        description="A reservation, capacity reservation or block: ID or ARN"
    )
    allocation: Text


class GroupChange(Section):
    allocation: Text
    effective_from: Timestamp = Field(
        BEGINNING, description="UTC timestamp from which this allocation applies"
    )


class ResourceGroup(Section):
    id: Text = Field(description="The resource group ID its tag carries")
    history: list[GroupChange] = Field(description="The group's allocations, in time order")

    @model_validator(mode="after")
    def _in_order(self) -> ResourceGroup:
        found: list[tuple[str, str]] = []
        if not self.history:
            found.append(("history", "give at least one {allocation, effective_from}"))
        for j in range(1, len(self.history)):
            previous, current = self.history[j - 1].effective_from, self.history[j].effective_from
            if current <= previous:
                found.append(
                    (
                        f"history[{j}].effective_from",
                        f"{current.isoformat()}Z is not after the previous change "
                        f"({previous.isoformat()}Z); list the history in time order",
                    )
                )
        raise_problems(found)
        return self


class Deployment(Section):
    id: Text = Field(description="The deployment ID its tag carries")
    resource_group: Text | None = Field(None, description="The group funding it (rule 3)")
    user: Text | None = Field(None, description="Its user on cost records")

    @model_validator(mode="after")
    def _something(self) -> Deployment:
        if self.resource_group is None and self.user is None:
            raise ValueError("give resource_group, user or both")
        return self


class Account(Section):
    account_id: Text = Field(description="A billing account or sub-account (quote it)")
    default_allocation: Text | None = Field(None, description="Rule 5: the account's default")
    default_allocation_from: Date | None = Field(
        None, description="First day the default applies (default: always)"
    )
    default_user: Text | None = Field(None, description="The account's default username")

    @model_validator(mode="after")
    def _start_needs_default(self) -> Account:
        if self.default_allocation_from is not None and self.default_allocation is None:
            raise ValueError(
                problems([("default_allocation_from", "only used with default_allocation")])
            )
        return self


class Kubernetes(Section):
    attribute_cluster_to: dict[str, Text] = Field(
        default_factory=dict,
        description="cluster ID -> allocation: the whole cluster's charges go to the allocation",
    )


class CloudCharges(Section):
    """Budget allocations and the rules that attribute cloud charges to them (SPEC §10)."""

    tag_keys: TagKeys = Field(default_factory=TagKeys)
    allocations: list[Allocation] = Field(default_factory=list)
    reservations: list[Reservation] = Field(default_factory=list)
    resource_groups: list[ResourceGroup] = Field(default_factory=list)
    deployments: list[Deployment] = Field(default_factory=list)
    accounts: list[Account] = Field(default_factory=list)
    kubernetes: Kubernetes = Field(default_factory=Kubernetes)
    estimate_window_days: Annotated[int, BeforeValidator(_window), Field(ge=1, le=31)] = Field(
        DEFAULT_ESTIMATE_WINDOW_DAYS, description="Days averaged for a month's estimated cost"
    )
    default_user: Text | None = Field(None, description="The organization's default username")

    @model_validator(mode="after")
    def _references(self) -> CloudCharges:
        found: list[tuple[str, str]] = []
        names: list[str] = []
        for i, allocation in enumerate(self.allocations):
            if allocation.name in names:
                found.append(
                    (f"allocations[{i}].name", f"allocation {allocation.name!r} is listed twice")
                )
            names.append(allocation.name)

        def refer(path: str, name: str) -> None:
            if name not in names:
                same_but_case = [known for known in names if known.lower() == name.lower()]
                hint = f"; did you mean {same_but_case[0]!r}?" if same_but_case else ""
                found.append(
                    (
                        path,
                        f"{name!r} is not an allocation (allocations: "
                        f"{', '.join(sorted(names)) or 'none'}){hint}",
                    )
                )

        mapped: dict[str, int] = {}
        for i, reservation in enumerate(self.reservations):
            key = reservation.reservation_id.lower()
            if key in mapped:
                found.append(
                    (
                        f"reservations[{i}].reservation_id",
                        f"{reservation.reservation_id!r} is already mapped by "
                        f"{SECTION}.reservations[{mapped[key]}]",
                    )
                )
            mapped.setdefault(key, i)
            refer(f"reservations[{i}].allocation", reservation.allocation)
        groups: list[str] = []
        for i, group in enumerate(self.resource_groups):
            if group.id in groups:
                found.append(
                    (f"resource_groups[{i}].id", f"resource group {group.id!r} is listed twice")
                )
            groups.append(group.id)
            for j, change in enumerate(group.history):
                refer(f"resource_groups[{i}].history[{j}].allocation", change.allocation)
        deployments: set[str] = set()
        for i, deployment in enumerate(self.deployments):
            if deployment.id in deployments:
                found.append(
                    (f"deployments[{i}].id", f"deployment {deployment.id!r} is listed twice")
                )
            deployments.add(deployment.id)
            if deployment.resource_group is not None and deployment.resource_group not in groups:
                found.append(
                    (
                        f"deployments[{i}].resource_group",
                        f"{deployment.resource_group!r} is not in {SECTION}.resource_groups "
                        f"(known: {', '.join(groups) or 'none'})",
                    )
                )
        accounts: set[str] = set()
        for i, account in enumerate(self.accounts):
            if account.account_id in accounts:
                found.append(
                    (f"accounts[{i}].account_id", f"account {account.account_id!r} is listed twice")
                )
            accounts.add(account.account_id)
            if account.default_allocation is not None:
                refer(f"accounts[{i}].default_allocation", account.default_allocation)
        for cluster_id, allocation in self.kubernetes.attribute_cluster_to.items():
            refer(f"kubernetes.attribute_cluster_to.{cluster_id}", allocation)
        raise_problems(found)
        return self

    def unknown_clusters(self, cluster_ids: list[str]) -> list[tuple[str, str]]:
        """`kubernetes.attribute_cluster_to` keys that are no configured cluster."""
        return [
            (
                f"kubernetes.attribute_cluster_to.{cluster_id}",
                f"no such cluster in clusters (known: {', '.join(cluster_ids) or 'none'})",
            )
            for cluster_id in self.kubernetes.attribute_cluster_to
            if cluster_id not in cluster_ids
        ]

    def tables(self, currency: str) -> dict[str, list[dict[str, Any]]]:
        """The rows of every `config.cloud_charge_*` table."""
        tables: dict[str, list[dict[str, Any]]] = {name: [] for name in CLOUD_CHARGE_TABLE_COLUMNS}
        for role in TAG_ROLES:
            for position, tag_key in enumerate(getattr(self.tag_keys, role), start=1):
                tables["cloud_charge_tag_keys"].append(
                    {
                        "tag_role": role,
                        "tag_key": tag_key,
                        "tag_key_match": tag_key_match(tag_key),
                        "list_position": position,
                    }
                )
        for i, allocation in enumerate(self.allocations, start=1):
            tables["cloud_charge_allocations"].append(
                {
                    "allocation_name": allocation.name,
                    "currency": allocation.currency or currency,
                    "monthly_budget": allocation.monthly_budget,
                    "list_position": i,
                }
            )
            for j, threshold in enumerate(allocation.thresholds, start=1):
                tables["cloud_charge_thresholds"].append(
                    {
                        "allocation_name": allocation.name,
                        "threshold_percent": threshold.percent,
                        "use_estimated": threshold.use_estimated,
                        "list_position": j,
                    }
                )
        for i, reservation in enumerate(self.reservations, start=1):
            tables["cloud_charge_reservations"].append(
                {
                    "reservation_id": reservation.reservation_id,
                    "reservation_key": reservation.reservation_id.lower(),
                    "allocation_name": reservation.allocation,
                    "list_position": i,
                }
            )
        for group in self.resource_groups:
            for j, change in enumerate(group.history, start=1):
                tables["cloud_charge_resource_groups"].append(
                    {
                        "resource_group_id": group.id,
                        "allocation_name": change.allocation,
                        "effective_at": change.effective_from,
                        "list_position": j,
                    }
                )
        for deployment in self.deployments:
            tables["cloud_charge_deployments"].append(
                {
                    "deployment_id": deployment.id,
                    "resource_group_id": deployment.resource_group,
                    "user_name": deployment.user,
                }
            )
        for account in self.accounts:
            start = account.default_allocation_from
            if start is None and account.default_allocation is not None:
                start = BEGINNING.date()
            tables["cloud_charge_accounts"].append(
                {
                    "account_id": account.account_id,
                    "default_allocation_name": account.default_allocation,
                    "default_allocation_start_date": start,
                    "default_user_name": account.default_user,
                }
            )
        for cluster_id, allocation in self.kubernetes.attribute_cluster_to.items():
            tables["cloud_charge_clusters"].append(
                {"cluster_id": str(cluster_id), "allocation_name": allocation}
            )
        tables["cloud_charge_settings"] = [
            {
                "estimate_window_days": self.estimate_window_days,
                "default_user_name": self.default_user,
            }
        ]
        return tables


def parse_cloud_charges(
    raw: Any, currency: str = "USD", cluster_ids: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Validate `cloud_charges:` and return the rows of every `config.cloud_charge_*` table.

    `currency` is the file's billing currency (an allocation's default); `cluster_ids`, when
    given, are the configured clusters that `kubernetes.attribute_cluster_to` may name."""
    section = validate(CloudCharges, {} if raw is None else raw, prefix=(SECTION,))
    if cluster_ids is not None:
        unknown = section.unknown_clusters(cluster_ids)
        if unknown:
            raise ConfigError(
                "\n".join(f"{SECTION}.{path}: {message}" for path, message in unknown)
            )
    return section.tables(currency)
