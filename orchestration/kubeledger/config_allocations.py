"""`cloud_charges:` in kubeledger.yml: budget allocations and the rules that attribute cloud
bill lines to them (SPEC §10), validated and turned into rows of the `config.cloud_charge_*`
tables (docs/config-tables.md).

`parse_cloud_charges` returns one list of rows per table, every table present (empty when the
YAML leaves it out); `CLOUD_CHARGE_TABLE_COLUMNS` gives their DuckDB column types. An invalid
setting raises `kubeledger.config.ConfigError` naming the key, e.g.
`cloud_charges.reservations[0].allocation: 'Reserch' is not an allocation (allocations:
Ops, Research)`.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

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


def _fail(message: str) -> NoReturn:
    # kubeledger.config imports this module, so its error class is looked up when needed.
    from kubeledger.config import ConfigError

    raise ConfigError(message)


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


def _mapping(value: Any, key: str) -> dict:
    if not isinstance(value, dict):
        _fail(f"{key}: expected a mapping, got {value!r}")
    return value


def _list(value: Any, key: str) -> list:
    if not isinstance(value, list):
        _fail(f"{key}: expected a list, got {value!r}")
    return value


def _text(value: Any, key: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        hint = (
            " (quote it)" if isinstance(value, int | float) and not isinstance(value, bool) else ""
        )
        _fail(f"{key}: expected a non-empty text, got {value!r}{hint}")
    if value != value.strip():
        _fail(f"{key}: {value!r} has leading or trailing spaces")
    return value


def _known_keys(section: dict, allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(name) for name in set(section) - set(allowed))
    if unknown:
        _fail(f"{where}.{unknown[0]}: unknown setting (allowed: {', '.join(sorted(allowed))})")


def _allocation_ref(value: Any, names: list[str], key: str) -> str:
    name = _text(value, key)
    if name not in names:
        same_but_case = [known for known in names if known.lower() == name.lower()]
        hint = f"; did you mean {same_but_case[0]!r}?" if same_but_case else ""
        _fail(
            f"{key}: {name!r} is not an allocation (allocations: "
            f"{', '.join(sorted(names)) or 'none'}){hint}"
        )
    return name


def _amount(value: Any, key: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        _fail(f"{key}: expected an amount, got {value!r}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        _fail(f"{key}: expected an amount, got {value!r}")
    if not amount.is_finite() or amount < 0:
        _fail(f"{key}: expected an amount of 0 or more, got {value!r}")
    if amount != amount.quantize(Decimal("0.01")):
        _fail(f"{key}: {value!r} has more than 2 decimals")
    return amount.quantize(Decimal("0.01"))


def _percent(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(f"{key}: expected a number, got {value!r}")
    if not 0 < value <= 1000:
        _fail(f"{key}: {value} is outside (0, 1000]")
    return float(value)


def _flag(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        _fail(f"{key}: expected true or false, got {value!r}")
    return value


def _timestamp(value: Any, key: str) -> dt.datetime:
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
            _fail(f"{key}: {value!r} is not a timestamp (e.g. 2026-10-15T12:00:00Z)")
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


def _date(value: Any, key: str) -> dt.date:
    if isinstance(value, dt.datetime):
        _fail(f"{key}: {value!r} is not a date (YYYY-MM-DD)")
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        _fail(f"{key}: {value!r} is not a date (YYYY-MM-DD)")


def _tag_keys(raw: Any, tables: dict[str, list[dict]]) -> None:
    where = f"{SECTION}.tag_keys"
    raw = _mapping(raw if raw is not None else {}, where)
    _known_keys(raw, TAG_ROLES, where)
    for role in TAG_ROLES:
        keys = raw.get(role, DEFAULT_TAG_KEYS[role])
        if isinstance(keys, str):
            keys = [keys]
        keys = _list(keys, f"{where}.{role}")
        if not keys:
            _fail(f"{where}.{role}: give at least one tag key")
        seen: dict[str, str] = {}
        for position, tag_key in enumerate(keys, start=1):
            key = f"{where}.{role}[{position - 1}]" if len(keys) > 1 else f"{where}.{role}"
            tag_key = _text(tag_key, key)
            match = tag_key_match(tag_key)
            if not match:
                _fail(f"{key}: {tag_key!r} has no letter or digit")
            if match in seen:
                _fail(f"{key}: {tag_key!r} is the same key as {seen[match]!r}")
            seen[match] = tag_key
            tables["cloud_charge_tag_keys"].append(
                {
                    "tag_role": role,
                    "tag_key": tag_key,
                    "tag_key_match": match,
                    "list_position": position,
                }
            )
    owners: dict[str, str] = {}
    for row in tables["cloud_charge_tag_keys"]:
        other = owners.setdefault(row["tag_key_match"], row["tag_role"])
        if other != row["tag_role"]:
            _fail(f"{where}.{row['tag_role']}: {row['tag_key']!r} is already the {other} tag key")


def _allocations(raw: Any, currency: str, tables: dict[str, list[dict]]) -> list[str]:
    names: list[str] = []
    for i, allocation in enumerate(_list(raw if raw is not None else [], f"{SECTION}.allocations")):
        key = f"{SECTION}.allocations[{i}]"
        allocation = _mapping(allocation, key)
        _known_keys(allocation, ("name", "currency", "monthly_budget", "thresholds"), key)
        name = _text(allocation.get("name"), f"{key}.name")
        if name in names:
            _fail(f"{key}.name: allocation {name!r} is listed twice")
        names.append(name)
        alloc_currency = _text(allocation.get("currency", currency), f"{key}.currency")
        if not CURRENCY_RE.match(alloc_currency):
            _fail(f"{key}.currency: {alloc_currency!r} is not a currency code such as USD")
        budget = allocation.get("monthly_budget")
        if budget is not None:
            budget = _amount(budget, f"{key}.monthly_budget")
        thresholds = _list(allocation.get("thresholds") or [], f"{key}.thresholds")
        if thresholds and budget is None:
            _fail(f"{key}.thresholds: thresholds need a monthly_budget")
        seen: set[tuple[float, bool]] = set()
        for j, threshold in enumerate(thresholds):
            threshold_key = f"{key}.thresholds[{j}]"
            threshold = _mapping(threshold, threshold_key)
            _known_keys(threshold, ("percent", "use_estimated"), threshold_key)
            percent = _percent(threshold.get("percent"), f"{threshold_key}.percent")
            use_estimated = _flag(
                threshold.get("use_estimated", False), f"{threshold_key}.use_estimated"
            )
            if (percent, use_estimated) in seen:
                _fail(f"{threshold_key}: the {percent:g}% threshold is listed twice")
            seen.add((percent, use_estimated))
            tables["cloud_charge_thresholds"].append(
                {
                    "allocation_name": name,
                    "threshold_percent": percent,
                    "use_estimated": use_estimated,
                    "list_position": j + 1,
                }
            )
        tables["cloud_charge_allocations"].append(
            {
                "allocation_name": name,
                "currency": alloc_currency,
                "monthly_budget": budget,
                "list_position": i + 1,
            }
        )
    return names


def _reservations(raw: Any, names: list[str], tables: dict[str, list[dict]]) -> None:
    seen: dict[str, int] = {}
    items = _list(raw if raw is not None else [], f"{SECTION}.reservations")
    for i, reservation in enumerate(items):
        key = f"{SECTION}.reservations[{i}]"
        reservation = _mapping(reservation, key)
        _known_keys(reservation, ("reservation_id", "allocation"), key)
        reservation_id = _text(reservation.get("reservation_id"), f"{key}.reservation_id")
        reservation_key = reservation_id.lower()
        if reservation_key in seen:
            _fail(
                f"{key}.reservation_id: {reservation_id!r} is already mapped by "
                f"{SECTION}.reservations[{seen[reservation_key]}]"
            )
        seen[reservation_key] = i
        tables["cloud_charge_reservations"].append(
            {
                "reservation_id": reservation_id,
                "reservation_key": reservation_key,
                "allocation_name": _allocation_ref(
                    reservation.get("allocation"), names, f"{key}.allocation"
                ),
                "list_position": i + 1,
            }
        )


def _resource_groups(raw: Any, names: list[str], tables: dict[str, list[dict]]) -> list[str]:
    groups: list[str] = []
    items = _list(raw if raw is not None else [], f"{SECTION}.resource_groups")
    for i, group in enumerate(items):
        key = f"{SECTION}.resource_groups[{i}]"
        group = _mapping(group, key)
        _known_keys(group, ("id", "history"), key)
        group_id = _text(group.get("id"), f"{key}.id")
        if group_id in groups:
            _fail(f"{key}.id: resource group {group_id!r} is listed twice")
        groups.append(group_id)
        history = _list(group.get("history"), f"{key}.history")
        if not history:
            _fail(f"{key}.history: give at least one {{allocation, effective_from}}")
        previous: dt.datetime | None = None
        for j, change in enumerate(history):
            change_key = f"{key}.history[{j}]"
            change = _mapping(change, change_key)
            _known_keys(change, ("allocation", "effective_from"), change_key)
            allocation = _allocation_ref(
                change.get("allocation"), names, f"{change_key}.allocation"
            )
            effective_at = _timestamp(
                change.get("effective_from", BEGINNING), f"{change_key}.effective_from"
            )
            if previous is not None and effective_at <= previous:
                _fail(
                    f"{change_key}.effective_from: {effective_at.isoformat()}Z is not after the "
                    f"previous change ({previous.isoformat()}Z); list the history in time order"
                )
            previous = effective_at
            tables["cloud_charge_resource_groups"].append(
                {
                    "resource_group_id": group_id,
                    "allocation_name": allocation,
                    "effective_at": effective_at,
                    "list_position": j + 1,
                }
            )
    return groups


def _deployments(raw: Any, groups: list[str], tables: dict[str, list[dict]]) -> None:
    seen: set[str] = set()
    items = _list(raw if raw is not None else [], f"{SECTION}.deployments")
    for i, deployment in enumerate(items):
        key = f"{SECTION}.deployments[{i}]"
        deployment = _mapping(deployment, key)
        _known_keys(deployment, ("id", "resource_group", "user"), key)
        deployment_id = _text(deployment.get("id"), f"{key}.id")
        if deployment_id in seen:
            _fail(f"{key}.id: deployment {deployment_id!r} is listed twice")
        seen.add(deployment_id)
        group = _text(deployment.get("resource_group"), f"{key}.resource_group", required=False)
        if group is not None and group not in groups:
            _fail(
                f"{key}.resource_group: {group!r} is not in {SECTION}.resource_groups "
                f"(known: {', '.join(groups) or 'none'})"
            )
        user = _text(deployment.get("user"), f"{key}.user", required=False)
        if group is None and user is None:
            _fail(f"{key}: give resource_group, user or both")
        tables["cloud_charge_deployments"].append(
            {"deployment_id": deployment_id, "resource_group_id": group, "user_name": user}
        )


def _accounts(raw: Any, names: list[str], tables: dict[str, list[dict]]) -> None:
    seen: set[str] = set()
    for i, account in enumerate(_list(raw if raw is not None else [], f"{SECTION}.accounts")):
        key = f"{SECTION}.accounts[{i}]"
        account = _mapping(account, key)
        _known_keys(
            account,
            ("account_id", "default_allocation", "default_allocation_from", "default_user"),
            key,
        )
        account_id = _text(account.get("account_id"), f"{key}.account_id")
        if account_id in seen:
            _fail(f"{key}.account_id: account {account_id!r} is listed twice")
        seen.add(account_id)
        allocation = account.get("default_allocation")
        if allocation is not None:
            allocation = _allocation_ref(allocation, names, f"{key}.default_allocation")
        start = account.get("default_allocation_from")
        if start is not None and allocation is None:
            _fail(f"{key}.default_allocation_from: only used with default_allocation")
        tables["cloud_charge_accounts"].append(
            {
                "account_id": account_id,
                "default_allocation_name": allocation,
                "default_allocation_start_date": (
                    _date(start, f"{key}.default_allocation_from")
                    if start is not None
                    else BEGINNING.date()
                    if allocation is not None
                    else None
                ),
                "default_user_name": _text(
                    account.get("default_user"), f"{key}.default_user", required=False
                ),
            }
        )


def _kubernetes(
    raw: Any, names: list[str], cluster_ids: list[str] | None, tables: dict[str, list[dict]]
) -> None:
    where = f"{SECTION}.kubernetes"
    raw = _mapping(raw if raw is not None else {}, where)
    _known_keys(raw, ("attribute_cluster_to",), where)
    clusters = _mapping(raw.get("attribute_cluster_to") or {}, f"{where}.attribute_cluster_to")
    for cluster_id, allocation in clusters.items():
        key = f"{where}.attribute_cluster_to.{cluster_id}"
        if cluster_ids is not None and cluster_id not in cluster_ids:
            _fail(f"{key}: no such cluster in clusters (known: {', '.join(cluster_ids) or 'none'})")
        tables["cloud_charge_clusters"].append(
            {
                "cluster_id": str(cluster_id),
                "allocation_name": _allocation_ref(allocation, names, key),
            }
        )


def parse_cloud_charges(
    raw: Any, currency: str = "USD", cluster_ids: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Validate `cloud_charges:` and return the rows of every `config.cloud_charge_*` table.

    `currency` is the file's billing currency (an allocation's default); `cluster_ids`, when
    given, are the configured clusters that `kubernetes.attribute_cluster_to` may name."""
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in CLOUD_CHARGE_TABLE_COLUMNS}
    raw = _mapping(raw if raw is not None else {}, SECTION)
    _known_keys(
        raw,
        (
            "tag_keys",
            "allocations",
            "reservations",
            "resource_groups",
            "deployments",
            "accounts",
            "kubernetes",
            "estimate_window_days",
            "default_user",
        ),
        SECTION,
    )
    _tag_keys(raw.get("tag_keys"), tables)
    names = _allocations(raw.get("allocations"), currency, tables)
    _reservations(raw.get("reservations"), names, tables)
    groups = _resource_groups(raw.get("resource_groups"), names, tables)
    _deployments(raw.get("deployments"), groups, tables)
    _accounts(raw.get("accounts"), names, tables)
    _kubernetes(raw.get("kubernetes"), names, cluster_ids, tables)
    window = raw.get("estimate_window_days", DEFAULT_ESTIMATE_WINDOW_DAYS)
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= 31:
        _fail(
            f"{SECTION}.estimate_window_days: expected a whole number of days from 1 to 31, "
            f"got {window!r}"
        )
    tables["cloud_charge_settings"] = [
        {
            "estimate_window_days": window,
            "default_user_name": _text(
                raw.get("default_user"), f"{SECTION}.default_user", required=False
            ),
        }
    ]
    return tables
