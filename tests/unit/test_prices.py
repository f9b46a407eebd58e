"""Price levels and currency conversion (static estimates)."""

from __future__ import annotations

import pytest
import yaml

from navigo_core.errors import InputError
from navigo_core.providers.prices import DATA_FILE, PriceLevel, convert, countries, price_level, rates, rates_as_of


def test_table_covers_about_sixty_countries_with_currencies() -> None:
    codes = countries()
    assert len(codes) >= 60
    for cc in ("CN", "JP", "US", "FR", "GB", "TH", "DE", "KR", "SG", "AU"):
        assert cc in codes
    for cc in codes:
        assert price_level(cc).currency in rates(), cc
    header = DATA_FILE.read_text(encoding="utf-8")
    assert "estimate" in header.lower() and "source" in header.lower()
    data = yaml.safe_load(header)
    assert data["as_of"] and data["currencies"]["as_of"]


def test_price_level_known_country() -> None:
    us, jp, th = price_level("US"), price_level("jp"), price_level("Thailand")
    assert isinstance(us, PriceLevel) and us.known and us.estimated and us.level == 1.0
    assert jp.country == "JP" and jp.currency == "JPY" and jp.country_name == "Japan"
    assert price_level("NO").known and price_level("NO").currency == "NOK"  # not YAML's false
    assert th.country == "TH" and th.level < jp.level < us.level < price_level("CH").level
    assert jp.food_per_day_usd == pytest.approx(us.food_per_day_usd * jp.level)
    assert jp.local_transport_per_day_usd == pytest.approx(us.local_transport_per_day_usd * jp.level)
    assert us.room_usd("budget") < us.room_usd("mid") < us.room_usd("luxury")
    assert jp.daily_per_traveller_usd() == pytest.approx(jp.food_per_day_usd + jp.local_transport_per_day_usd)
    with pytest.raises(InputError):
        us.room_usd("palace")


def test_price_level_unknown_country_has_a_default() -> None:
    for unknown in ("XX", "Atlantis", "", None):
        p = price_level(unknown)
        assert not p.known and p.estimated and 0.3 < p.level < 1.0
        assert p.food_per_day_usd > 0 and p.room_usd() > 0


def test_convert() -> None:
    assert convert(100, "USD", "USD") == 100
    assert convert(100, "usd", "CNY") == pytest.approx(100 * rates()["CNY"])
    assert convert(convert(250, "EUR", "JPY"), "JPY", "EUR") == pytest.approx(250)
    assert 5 < convert(1, "GBP", "CNY") < 12
    assert rates_as_of().startswith("20")
    with pytest.raises(InputError) as exc:
        convert(1, "USD", "XYZ")
    assert exc.value.code == "prices.unknown_currency" and "XYZ" in exc.value.message("en")
