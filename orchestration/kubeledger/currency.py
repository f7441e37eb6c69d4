"""Currency data from Babel (CLDR): each currency's minor unit and how amounts read.

SPEC §1.2: bill amounts are rounded to the billing currency's minor unit (JPY 0 digits, USD 2,
KWD 3). The close reads the digits from the seed `seeds/currency_minor_units.csv`, which this
module writes from Babel (`python -m kubeledger.currency`); a test checks that the seed still
equals Babel, so upgrading Babel cannot silently change a bill.

Bill money columns are decimal(38, 3): wide enough for every currency the seed lists, each
value rounded to its currency's unit. Currencies whose unit has more than 3 digits (CLF, UYW:
units of account, not billing currencies) are left out of the seed, so the close refuses them.
"""

from __future__ import annotations

import csv
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from babel.numbers import (
    format_currency,
    get_currency_precision,
    get_currency_symbol,
    list_currencies,
)

BILL_SCALE = 3
SEED = Path(__file__).resolve().parents[2] / "seeds" / "currency_minor_units.csv"


def minor_unit_digits(currency: str) -> int:
    """Digits of the currency's minor unit (JPY 0, USD 2, KWD 3); 2 for an unknown code."""
    return int(get_currency_precision(currency.strip().upper()))


def seed_rows() -> list[tuple[str, int]]:
    """(currency, digits) for every currency Babel knows whose unit fits a bill column."""
    rows = ((code, minor_unit_digits(code)) for code in sorted(list_currencies()))
    return [(code, digits) for code, digits in rows if digits <= BILL_SCALE]


def write_seed(path: Path = SEED) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["currency", "minor_unit_digits"])
        writer.writerows(seed_rows())


def format_amount(
    amount: Decimal | float | int | None, currency: str | None, locale: str = "en_US"
) -> str:
    """An amount as a person reads it in its currency, at the currency's minor unit (rounded
    half up, as the close rounds): `$1,234.50`, `¥1,235`, `KWD 1.250`, `-$1.00`; "" for none."""
    if amount is None:
        return ""
    code = (currency or "USD").strip().upper()
    value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    value = value.quantize(Decimal(1).scaleb(-minor_unit_digits(code)), rounding=ROUND_HALF_UP)
    text = format_currency(value, code, locale=locale)
    symbol = currency_symbol(code, locale)
    if symbol[-1:].isalpha():  # CLDR's currency spacing, which Babel leaves out: `KWD 1.250`
        text = text.replace(symbol, symbol + " ", 1)
    return text


def currency_symbol(currency: str | None, locale: str = "en_US") -> str:
    """The currency's symbol as Babel writes it before an amount: `$`, `¥`, `KWD`."""
    return get_currency_symbol((currency or "USD").strip().upper(), locale=locale)


if __name__ == "__main__":
    write_seed(Path(sys.argv[1]) if len(sys.argv) > 1 else SEED)
