"""The reference pricing's rate card (SPEC §4 "No-bill clusters"): prices from `node_prices:`
in kubeledger.yml and the rate-card CSVs, each with its effective date. Imports nothing of
kubeledger."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from tests.reference import pricing_inputs as inputs


@dataclass
class RatePrice:
    cluster_id: str
    resource: str  # node | volume | load_balancer
    selector_type: str  # node (a name) | label
    selector: str
    price: float
    unit: str
    effective_from: dt.date
    position: int


@dataclass
class RateCard:
    prices: list[RatePrice] = field(default_factory=list)

    def price(
        self, cluster: str, resource: str, name: str, labels: dict[str, str], day: dt.date
    ) -> float | None:
        """SPEC §4: the resource's own name price wins, else the first label price in list
        order that matches; each selector's price is the one in effect on the day (the latest
        effective_from on or before it), so earlier days keep the price they had."""
        candidates = [
            price
            for price in self.prices
            if price.cluster_id == cluster
            and price.resource == resource
            and price.effective_from <= day
        ]
        named = [p for p in candidates if p.selector_type != "label" and p.selector == name]
        if named:
            return max(named, key=lambda p: (p.effective_from, p.position)).price
        by_selector: dict[str, list[RatePrice]] = {}
        for price in candidates:
            if price.selector_type == "label":
                by_selector.setdefault(price.selector, []).append(price)
        first_position = {}
        for price in self.prices:
            if price.selector_type == "label":
                first_position.setdefault(
                    (price.cluster_id, price.resource, price.selector), price.position
                )
        for selector in sorted(by_selector, key=lambda s: first_position[(cluster, resource, s)]):
            if _label_matches(selector, labels):
                chosen = max(by_selector[selector], key=lambda p: (p.effective_from, p.position))
                return chosen.price
        return None


def _label_matches(selector: str, labels: dict[str, str]) -> bool:
    key, has_value, value = selector.partition("=")
    wanted = inputs.sanitize_key(key.strip()).lower()
    for label_key, label_value in labels.items():
        if inputs.sanitize_key(label_key).lower() == wanted:
            return (not has_value) or label_value == value.strip()
    return False


def rate_card(files: list[inputs.LandingFile], config: dict) -> RateCard:
    """Prices from `node_prices:` in kubeledger.yml, then from rate-card CSVs (SPEC silent
    on the order between the two sources; README lists the CSV as the alternative to the
    YAML, so the YAML entries come first in list order)."""
    card = RateCard()
    position = 0
    for entry in config.get("node_prices") or []:
        if "node" in entry and entry.get("node") is not None:
            selector_type, selector = "node", str(entry["node"])
        else:
            selector_type, selector = "label", str(entry.get("label"))
        effective = entry.get("effective_from") or dt.date(1970, 1, 1)
        if isinstance(effective, str):
            effective = dt.date.fromisoformat(effective[:10])
        card.prices.append(
            RatePrice(
                str(entry["cluster"]),
                "node",
                selector_type,
                selector,
                float(entry["hourly_price"]),
                "hour",
                effective,
                position,
            )
        )
        position += 1
    columns = [
        "cluster_id",
        "resource",
        "selector_type",
        "selector",
        "price",
        "unit",
        "effective_from",
    ]
    for file in sorted(files, key=lambda f: f.relative):
        for row in inputs.read_table(file, columns).itertuples(index=False):
            effective = inputs.parse_timestamp(row.effective_from)
            card.prices.append(
                RatePrice(
                    row.cluster_id,
                    (row.resource or "node").strip(),
                    (row.selector_type or "node").strip(),
                    (row.selector or "").strip(),
                    float(row.price),
                    (row.unit or "hour").strip(),
                    effective.date() if effective else dt.date(1970, 1, 1),
                    position,
                )
            )
            position += 1
    return card
