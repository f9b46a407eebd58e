"""Travel price levels per country and static currency conversion, for trip budgets.

Everything here is an ESTIMATE (``estimated=True``), read from
``navigo_core/data/price_levels.yaml`` (NaviGo's own figures; see its header
for the source line and the date). Costs in USD::

    food per traveller per day        = baseline food_per_day            × level
    local transport per traveller/day = baseline local_transport_per_day × level
    room per night (budget|mid|luxury) = baseline room_per_night[tier]    × level

where ``level`` is the country's price level (United States = 1.0). A country
the file does not list gets ``default_level`` and ``known=False``.

:func:`convert` uses the file's static, dated table of units per USD.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from navigo_core.errors import InputError
from navigo_core.safe_yaml import read_yaml

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "price_levels.yaml"
Tier = Literal["budget", "mid", "luxury"]
TIERS: tuple[str, ...] = ("budget", "mid", "luxury")


class PriceLevel(BaseModel):
    """Estimated daily travel costs in one country, in USD."""

    country: str  # ISO 3166-1 alpha-2 as given (upper case), or the text given for an unknown country
    country_name: str = ""
    level: float  # relative price level, United States = 1.0
    currency: str = "USD"  # the country's currency (ISO 4217); "USD" when unknown
    food_per_day_usd: float  # per traveller
    local_transport_per_day_usd: float  # per traveller
    room_per_night_usd: dict[str, float]  # per room, by tier: budget, mid, luxury
    known: bool  # False: the country is not in the table and the default level was used
    estimated: bool = True  # always: these are NaviGo's own estimates
    as_of: str = ""
    source: str = ""

    def room_usd(self, tier: str = "mid") -> float:
        """One night's room in ``tier`` (budget | mid | luxury)."""
        if tier not in self.room_per_night_usd:
            raise InputError("prices.unknown_tier", tier=tier, tiers=", ".join(TIERS))
        return self.room_per_night_usd[tier]

    def daily_per_traveller_usd(self) -> float:
        """Food plus local transport for one traveller for one day."""
        return self.food_per_day_usd + self.local_transport_per_day_usd


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data = read_yaml(DATA_FILE)
    bad = [k for k in data["countries"] if not isinstance(k, str)]
    if bad:  # e.g. an unquoted NO (Norway) read by YAML as false
        raise ValueError(f"{DATA_FILE.name}: country keys must be strings, got {bad!r} (quote them)")
    names = {str(v.get("name", "")).casefold(): k for k, v in data["countries"].items()}
    data["_by_name"] = names
    return data


def countries() -> list[str]:
    """The ISO codes the table lists."""
    return sorted(_data()["countries"])


def price_level(country: str | None) -> PriceLevel:
    """The estimated price level of ``country`` (ISO alpha-2 code or English name, any case).

    Unknown or empty → the default level with ``known=False`` (still ``estimated=True``).
    """
    data = _data()
    text = (country or "").strip()
    code = text.upper()
    entry = data["countries"].get(code)
    if entry is None and text:
        code = data["_by_name"].get(text.casefold(), code)
        entry = data["countries"].get(code)
    level = float(entry["level"]) if entry else float(data["default_level"])
    base = data["baseline_usd"]
    return PriceLevel(
        country=code if entry or len(text) == 2 else text, country_name=str(entry.get("name", "")) if entry else "", level=level,
        currency=str(entry["currency"]) if entry else "USD",
        food_per_day_usd=round(base["food_per_day"] * level, 2),
        local_transport_per_day_usd=round(base["local_transport_per_day"] * level, 2),
        room_per_night_usd={t: round(float(base["room_per_night"][t]) * level, 2) for t in TIERS},
        known=entry is not None, estimated=True, as_of=str(data.get("as_of", "")), source=str(data.get("source", "")),
    )


def rates() -> dict[str, float]:
    """Units of each currency per 1 USD (static estimates dated :func:`rates_as_of`)."""
    return {k: float(v) for k, v in _data()["currencies"]["per_usd"].items()}


def rates_as_of() -> str:
    """The date of the static rate table (e.g. ``2025-01-01``)."""
    return str(_data()["currencies"]["as_of"])


def convert(amount: float, from_currency: str, to_currency: str) -> float:
    """``amount`` in ``from_currency`` expressed in ``to_currency`` with the static table (an estimate).

    Raises ``InputError("prices.unknown_currency")`` for a currency the table lacks.
    """
    table = rates()
    src, dst = from_currency.strip().upper(), to_currency.strip().upper()
    for c in (src, dst):
        if c not in table:
            raise InputError("prices.unknown_currency", currency=c, known=", ".join(sorted(table)))
    if src == dst:
        return float(amount)
    return float(amount) / table[src] * table[dst]
