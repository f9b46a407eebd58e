"""Flights: the offline estimator, airports_for_city, Duffel against a fake server, recommend, the factory."""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from navigo_core.config import Settings
from navigo_core.errors import InputError, ProviderError, ProviderHTTPError, ProviderNotConfigured, ProviderTimeout
from navigo_core.i18n import t
from navigo_core.providers.flights import (
    DuffelFlightProvider,
    FlightOffer,
    FlightProvider,
    OfflineFlightProvider,
    airports_for_city,
    effective_flights_provider,
    estimate_duration_min,
    estimate_fare_usd,
    make_flight_provider,
    recommend,
)
from navigo_core.providers.flights.duffel import parse_iso_duration_min
from navigo_core.providers.places.base import Place
from tests.fakes.duffel import FAKE_TOKEN, FakeDuffel, duffel_offer, duffel_segment

pytestmark = pytest.mark.usefixtures("no_internet")

DAY = date(2025, 5, 1)


# --- offline estimator --------------------------------------------------------

def test_offline_pvg_pek_is_plausible() -> None:
    offers = OfflineFlightProvider().search("PVG", "PEK", DAY, adults=1)
    assert len(offers) == 3
    for o in offers:
        assert o.estimated and o.carrier == "estimate" and o.provider == "offline" and o.flight_number == ""
        assert (o.origin, o.destination, o.currency, o.stops, o.price_is_total_for) == ("PVG", "PEK", "USD", 0, 1)
        assert 100 <= o.duration_min <= 150  # real: about 2 h 10
        assert 100 <= o.price <= 250  # about CNY 700–1,800 one-way economy
        assert o.depart_at.tzinfo is not None and o.arrive_at.utcoffset() == timedelta(hours=8)
        assert o.arrive_at - o.depart_at == timedelta(minutes=o.duration_min)
    assert [o.depart_at.strftime("%H:%M") for o in offers] == ["07:30", "12:15", "18:40"]
    assert offers[0].price < offers[1].price < offers[2].price  # early flights cheaper


def test_offline_pvg_nrt_crosses_time_zones() -> None:
    o = OfflineFlightProvider().search("PVG", "NRT", DAY, adults=1)[1]
    assert 140 <= o.duration_min <= 200  # real: about 2 h 50
    assert 150 <= o.price <= 350
    assert o.depart_at.utcoffset() == timedelta(hours=8) and o.arrive_at.utcoffset() == timedelta(hours=9)
    assert o.arrive_at.strftime("%H:%M") == (datetime(2025, 5, 1, 13, 15) + timedelta(minutes=o.duration_min)).strftime("%H:%M")


def test_offline_formulas_documented_values() -> None:
    assert estimate_duration_min(800) == 90  # 30 + 60
    assert estimate_fare_usd(1000) == pytest.approx(50 + 110)
    assert estimate_fare_usd(2000) == pytest.approx(50 + 110 + 80)
    assert estimate_fare_usd(2000, "business") == pytest.approx(3.5 * 240)
    fares = [estimate_fare_usd(km) for km in range(300, 16000, 250)]
    assert fares == sorted(fares)  # never cheaper for a longer flight
    assert estimate_duration_min(13000) > estimate_duration_min(11900) + 120  # one stop beyond 12,000 km


def test_offline_passengers_and_cabin() -> None:
    p = OfflineFlightProvider()
    one = p.search("PVG", "NRT", DAY, adults=1)[1].price
    family = p.search("PVG", "NRT", DAY, adults=2, children=2, max_offers=2)
    assert len(family) == 2
    assert family[1].price == pytest.approx(one * 3.5, abs=2)  # children pay 75 %
    assert family[1].price_is_total_for == 4
    assert p.search("PVG", "NRT", DAY, adults=1, cabin="business")[1].price > 3 * one
    with pytest.raises(InputError):
        p.search("PVG", "NRT", DAY, adults=0)
    with pytest.raises(InputError, match="cabin"):
        p.search("PVG", "NRT", DAY, adults=1, cabin="deluxe")


def test_short_hop_needs_no_flight() -> None:
    assert OfflineFlightProvider().search("PVG", "HGH", DAY, adults=1) == []  # ~160 km
    assert OfflineFlightProvider().search("SHA", "NKG", DAY, adults=1) == []
    assert "300 km" in t("flights.no_flight_needed", "en", origin="Shanghai", destination="Hangzhou")


def test_offline_accepts_city_names_and_rejects_unknown() -> None:
    o = OfflineFlightProvider().search("Shanghai", "Tokyo", DAY, adults=1)[0]
    assert (o.origin, o.destination) == ("PVG", "HND")
    with pytest.raises(InputError) as exc:
        OfflineFlightProvider().search("QQQ", "PEK", DAY, adults=1)
    assert exc.value.code == "flights.unknown_airport"


def test_airports_for_city() -> None:
    assert airports_for_city("Shanghai") == ["PVG", "SHA"]
    assert airports_for_city("上海") == ["PVG", "SHA"]
    assert airports_for_city("Beijing") == ["PEK", "PKX"]
    assert airports_for_city("tokyo") == ["HND", "NRT"]
    assert airports_for_city("Hangzhou") == ["HGH"]
    assert airports_for_city("Paris, France") == ["CDG", "ORY"]
    assert airports_for_city("NRT") == ["NRT"]
    assert airports_for_city("Lyon") == ["LYS"]
    assert airports_for_city(Place(name="Hangzhou", lat=30.29, lon=120.16, country="CN")) == ["HGH"]
    assert airports_for_city(Place(name="Narita", lat=35.77, lon=140.39, source="iata", ref="NRT")) == ["NRT"]
    # no mapping and no city match: the nearest airport to the place's coordinates
    near = airports_for_city(Place(name="Somewhere near Pudong", lat=31.15, lon=121.80))
    assert near == ["PVG"]
    assert airports_for_city(Place(name="Mid-Pacific", lat=0.0, lon=-150.0)) == []


# --- Duffel -------------------------------------------------------------------

def duffel(fake: FakeDuffel, timeout_s: float = 2.0, token: str = FAKE_TOKEN) -> DuffelFlightProvider:
    return DuffelFlightProvider(token, base_url=fake.url, timeout_s=timeout_s)


def test_duffel_request_headers_body_and_passengers(fake_duffel: FakeDuffel) -> None:
    offers = duffel(fake_duffel).search("pvg", "NRT", DAY, adults=2, children=1, cabin="business")
    assert len(offers) == 3
    (req,) = fake_duffel.requests
    assert req.method == "POST" and req.path == "/air/offer_requests" and req.params["return_offers"] == "true"
    assert req.headers["authorization"] == f"Bearer {FAKE_TOKEN}"
    assert req.headers["duffel-version"] == "v2" and req.headers["accept"] == "application/json"
    body = req.json()["data"]
    assert body["slices"] == [{"origin": "PVG", "destination": "NRT", "departure_date": "2025-05-01"}]
    assert body["passengers"] == [{"type": "adult"}, {"type": "adult"}, {"age": 8}]
    assert body["cabin_class"] == "business"


def test_duffel_parses_offers(fake_duffel: FakeDuffel) -> None:
    fake_duffel.offers = [
        duffel_offer("off_b", [duffel_segment("PVG", "NRT", "2025-05-01T09:00:00", "2025-05-01T12:55:00",
                                              carrier="MU", flight_number="523", duration="PT2H55M",
                                              origin_tz="Asia/Shanghai", destination_tz="Asia/Tokyo")],
                     total_amount="412.30", currency="CNY", duration="PT2H55M"),
        duffel_offer("off_a", [
            duffel_segment("PVG", "ICN", "2025-05-01T08:00:00", "2025-05-01T11:00:00", carrier="KE",
                           flight_number="894", duration="PT2H"),  # no time_zone: from airportsdata
            duffel_segment("ICN", "NRT", "2025-05-01T13:00:00", "2025-05-01T15:25:00", carrier="KE",
                           flight_number="703", duration="PT2H25M"),
        ], total_amount="250.00", currency="CNY", duration=None),
    ]
    a, b = duffel(fake_duffel).search("PVG", "NRT", DAY, adults=1)
    assert a.id == "off_a" and b.id == "off_b"  # sorted by price
    assert (b.carrier, b.flight_number, b.stops, b.duration_min) == ("MU", "MU523", 0, 175)
    assert (b.price, b.currency, b.estimated, b.provider) == (412.30, "CNY", False, "duffel")
    assert b.depart_at == datetime(2025, 5, 1, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert b.arrive_at == datetime(2025, 5, 1, 12, 55, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert (a.origin, a.destination, a.stops, a.flight_number) == ("PVG", "NRT", 1, "KE894")
    assert a.duration_min == 385  # no slice duration: arrival − departure (08:00 CST → 15:25 JST), layover included
    assert a.arrive_at.utcoffset() == timedelta(hours=9)


def test_duffel_max_offers_and_generated_currency(fake_duffel: FakeDuffel) -> None:
    fake_duffel.currency = "GBP"
    offers = duffel(fake_duffel).search("LHR", "CDG", DAY, adults=1, max_offers=2)
    assert len(offers) == 2 and all(o.currency == "GBP" for o in offers)


def test_iso_duration() -> None:
    assert parse_iso_duration_min("PT2H5M") == 125
    assert parse_iso_duration_min("PT45M") == 45
    assert parse_iso_duration_min("P1DT2H") == 1560
    assert parse_iso_duration_min(None) is None and parse_iso_duration_min("2h") is None


def test_duffel_error_message_and_no_token(fake_duffel: FakeDuffel) -> None:
    with pytest.raises(ProviderHTTPError) as exc:
        duffel(fake_duffel, token="wrong_secret_token_xyz").search("PVG", "NRT", DAY, adults=1)
    msg = exc.value.message("en") + exc.value.message("zh") + repr(exc.value) + str(exc.value.params)
    assert "401" in msg and "Invalid access token" in msg
    assert "wrong_secret_token_xyz" not in msg

    fake_duffel.error = (422, "validation_error", "Invalid airport", "Field 'origin' is not a valid IATA code")
    with pytest.raises(ProviderHTTPError) as exc:
        duffel(fake_duffel).search("PVG", "NRT", DAY, adults=1)
    assert "not a valid IATA code" in exc.value.message("en") and "422" in exc.value.message("en")
    assert FAKE_TOKEN not in exc.value.message("en")


def test_duffel_scrubs_an_echoed_token(fake_duffel: FakeDuffel) -> None:
    fake_duffel.error = (400, "invalid_request_error", "Bad token", f"token {FAKE_TOKEN} is malformed")
    with pytest.raises(ProviderHTTPError) as exc:
        duffel(fake_duffel).search("PVG", "NRT", DAY, adults=1)
    assert FAKE_TOKEN not in exc.value.message("en") and "***" in exc.value.message("en")
    assert FAKE_TOKEN not in repr(duffel(fake_duffel))


def test_duffel_injected_5xx_and_bad_json(fake_duffel: FakeDuffel) -> None:
    fake_duffel.set_fault(status=503)
    with pytest.raises(ProviderHTTPError) as exc:
        duffel(fake_duffel).search("PVG", "NRT", DAY, adults=1)
    assert "503" in exc.value.message("en") and "injected fault" in exc.value.message("en")
    fake_duffel.set_fault(malformed_json=True)
    with pytest.raises(ProviderError) as exc2:
        duffel(fake_duffel).search("PVG", "NRT", DAY, adults=1)
    assert exc2.value.code == "provider.bad_json"


def test_duffel_timeout(fake_duffel: FakeDuffel, caplog: pytest.LogCaptureFixture) -> None:
    fake_duffel.set_fault(hang=True)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderTimeout) as exc:
        duffel(fake_duffel, timeout_s=0.2).search("PVG", "NRT", DAY, adults=1)
    assert "Duffel" in exc.value.message("en") and "0.2" in exc.value.message("en")
    assert FAKE_TOKEN not in exc.value.message("en") and FAKE_TOKEN not in caplog.text


def test_duffel_bad_reply(fake_duffel: FakeDuffel) -> None:
    fake_duffel.offers = [{"id": "off_x", "total_amount": "1.00"}]  # no slices
    with pytest.raises(ProviderError) as exc:
        duffel(fake_duffel).search("PVG", "NRT", DAY, adults=1)
    assert exc.value.code == "provider.bad_reply"


# --- recommend ----------------------------------------------------------------

def offer(oid: str, dep: tuple[int, int, int], arr: tuple[int, int, int], price: float) -> FlightOffer:
    tz = timezone(timedelta(hours=8))
    return FlightOffer(id=oid, origin="PVG", destination="PEK", depart_at=datetime(2025, 5, *dep, tzinfo=tz),
                       arrive_at=datetime(2025, 5, *arr, tzinfo=tz), duration_min=120, carrier="MU", price=price,
                       estimated=False, provider="test")


def test_recommend_ordering() -> None:
    start = date(2025, 5, 2)
    late_cheap = offer("late", (2, 20, 0), (3, 0, 30), 50)  # arrives after the start date
    early = offer("early", (1, 8, 0), (1, 10, 0), 300)
    on_day = offer("on_day", (2, 6, 0), (2, 8, 0), 100)
    assert recommend([late_cheap, on_day, early], start).id == "early"  # on time first, then earlier arrival
    assert recommend([late_cheap, on_day], start).id == "on_day"
    same_arrival_cheaper = offer("cheaper", (1, 7, 0), (1, 10, 0), 200)
    assert recommend([early, same_arrival_cheaper], start).id == "cheaper"  # same arrival: lower price
    a = offer("a", (1, 7, 0), (1, 10, 0), 200)
    b = offer("b", (1, 6, 0), (1, 10, 0), 200)
    assert recommend([a, b], start).id == "b"  # same arrival and price: earlier departure
    only_late = [late_cheap, offer("later", (3, 9, 0), (3, 11, 0), 10)]
    assert recommend(only_late, start).id == "late"  # none on time: earliest arrival
    assert recommend([], start) is None
    assert recommend(iter([early]), start) is early  # any iterable, one pass


# --- factory ------------------------------------------------------------------

def test_factory_auto_and_explicit(fake_duffel: FakeDuffel) -> None:
    s = Settings(duffel_access_token="", flights_provider="auto")
    assert effective_flights_provider(s) == "offline"
    assert isinstance(make_flight_provider(s), OfflineFlightProvider)
    s = Settings(duffel_access_token=FAKE_TOKEN, duffel_base_url=fake_duffel.url + "/", flights_provider="auto")
    p = make_flight_provider(s)
    assert isinstance(p, DuffelFlightProvider) and isinstance(p, FlightProvider)
    assert p.search("PVG", "PEK", DAY, adults=1)[0].provider == "duffel"
    assert isinstance(make_flight_provider(s, name="offline"), OfflineFlightProvider)
    assert isinstance(make_flight_provider(Settings(flights_provider="offline", duffel_access_token="x")),
                      OfflineFlightProvider)
    with pytest.raises(ProviderNotConfigured) as exc:
        make_flight_provider(Settings(flights_provider="duffel", duffel_access_token=""))
    assert "DUFFEL_ACCESS_TOKEN" in exc.value.message("en")
    with pytest.raises(ProviderNotConfigured):
        make_flight_provider(s, name="skyscanner")


def test_flight_i18n_keys_complete() -> None:
    from navigo_core.i18n import catalog

    keys = [k for k in catalog() if k.split(".")[0] in ("flights", "weather", "prices")]
    assert len(keys) > 30
    for key in keys:
        assert catalog()[key]["en"] and catalog()[key]["zh"], key
