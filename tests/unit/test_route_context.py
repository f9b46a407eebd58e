"""Issue 15, Route page: place picks decided by the other places of the request, legs no road can make,
and names for points clicked on the map. Each test failed on the code before the fix."""

from __future__ import annotations

import pytest

from navigo_core.config import get_settings
from navigo_core.errors import PlaceResolutionError
from navigo_core.i18n import t
from navigo_core.providers.places import GazetteerPlaceProvider
from navigo_core.route.form import clicked_row, literal_points
from navigo_core.route.models import RouteRequest
from navigo_core.route.noroad import MAX_DRIVE_KM, landmass, no_road
from navigo_core.route.service import RouteDeps, make_route_deps, plan_route
from navigo_core.understand.places import place_candidates, rank_places

pytestmark = pytest.mark.usefixtures("no_internet")
GAZ = GazetteerPlaceProvider()


def deps() -> RouteDeps:
    return make_route_deps(get_settings(), matrix_name="offline")


def route(origin: str, destination: str, *stops: str, **kw: object) -> RouteRequest:
    return RouteRequest(origin=origin, destination=destination, stops=list(stops), **kw)  # type: ignore[arg-type]


# --- place picks by context ---------------------------------------------------------------

def test_venice_among_italian_stops_is_venice_italy_and_says_why() -> None:
    result = plan_route(route("Rome", "Milan", "Florence", "Venice", "Bologna"), deps())
    venice = next(p for p in result.points if p.name == "Venice")
    assert venice.country == "IT"  # not Dayton, Ohio (an old alternate name) nor Venice, Florida
    choice = next(c for c in result.choices if c.text == "Venice")
    assert choice.why == "place.why.same_country" and not choice.picked and choice.others >= 1
    assert "same country as" in t(choice.why, "en", **choice.why_params)
    assert {p.country for p in result.points} == {"IT"}


def test_venice_alone_never_offers_dayton_first() -> None:
    ranking = rank_places(place_candidates("Venice", GAZ, regions=False), [], "en", strict=True)
    assert ranking.places[0].country == "IT"
    assert all(p.name == "Venice" for p in ranking.places)  # Dayton is matched only by an old alternate name


def test_twelve_european_cities_need_no_pick() -> None:
    cities = ["London", "Berlin", "Rome", "Vienna", "Prague", "Amsterdam", "Brussels", "Madrid", "Barcelona", "Munich"]
    result = plan_route(route("Paris", "Lisbon", *cities), deps())
    assert len(result.points) == 12 and {p.country for p in result.points} <= {"FR", "GB", "DE", "IT", "AT", "CZ",
                                                                                 "NL", "BE", "ES", "PT"}
    assert result.no_road_legs == []


def test_shanghai_suzhou_wuxi_hangzhou_need_no_pick() -> None:
    """The issue's crash started with two picks the context made obvious."""
    result = plan_route(route("Shanghai", "Hangzhou", "Suzhou", "Wuxi"), deps())
    assert [p.admin for p in result.points if p.name in ("Suzhou", "Wuxi")] and all(
        p.admin == "Jiangsu" for p in result.points if p.name in ("Suzhou", "Wuxi"))
    assert {c.text for c in result.choices} == {"Suzhou", "Wuxi"}


def test_real_doubt_still_asks_with_the_candidates_ranked_by_distance() -> None:
    with pytest.raises(PlaceResolutionError) as e:
        plan_route(route("Paris", "London", "Springfield"), deps())
    err = e.value
    assert err.query == "Springfield" and len(err.candidates) >= 4
    km = err.km  # type: ignore[attr-defined]
    assert km == sorted(km)  # the nearest to the other places first
    key, params = err.why  # type: ignore[attr-defined]
    assert key == "place.why.nearest" and params["place"] in ("Paris", "London")


def test_chinese_input_prefers_china() -> None:
    ranking = rank_places(place_candidates("Suzhou", GAZ, regions=False), [], "zh", strict=True)
    assert ranking.places[0].country == "CN"


# --- legs with no road --------------------------------------------------------------------

def test_a_leg_across_the_atlantic_is_flagged_not_a_drive() -> None:
    d = deps()
    springfield = next(p for p in place_candidates("Springfield", GAZ, regions=False) if p.admin == "Illinois")
    d.picked = {"Springfield": springfield}
    result = plan_route(route("Paris", "Springfield", "Lyon"), d)
    assert [leg.no_road for leg in result.legs] == ["", "sea"]
    assert result.no_road_legs == [1]
    assert result.deep_links.legs[1].google == "" and not result.deep_links.whole("google")
    assert result.deep_links.amap_web == []  # AMap only inside China


def test_fly_this_leg_makes_it_a_flight_estimate() -> None:
    d = deps()
    springfield = next(p for p in place_candidates("Springfield", GAZ, regions=False) if p.admin == "Illinois")
    d.picked = {"Springfield": springfield}
    driven = plan_route(route("Paris", "Springfield", "Lyon"), d)
    flown = plan_route(route("Paris", "Springfield", "Lyon", fly_legs=[("Springfield", "Lyon")]), d)
    leg = flown.legs[1]
    assert leg.mode == "flight" and leg.no_road == "" and flown.no_road_legs == []
    assert leg.distance_m < driven.legs[1].distance_m  # great circle, not a road estimate
    assert 8 * 3600 < leg.duration_s < 11 * 3600  # block time at 800 km/h, not a 95-hour "drive"
    assert "route.note.flights" in flown.notes
    assert abs(flown.total_duration_s - sum(x.duration_s for x in flown.legs)) < 1e-6
    assert flown.cli_dict()["legs"][1]["mode"] == "flight"


@pytest.mark.parametrize(("a", "b", "why"), [
    ("Venice", "Dayton", "sea"), ("Shanghai", "Tokyo", "sea"), ("Panama", "Bogota", "sea"),
    ("Honolulu", "Los Angeles", "sea"), ("Lisbon", "Beijing", "too_far"),
    ("Paris", "London", ""), ("Shanghai", "Hangzhou", ""), ("Cairo", "Istanbul", ""), ("Sydney", "Melbourne", ""),
])
def test_no_road_between_landmasses_or_beyond_any_drive(a: str, b: str, why: str) -> None:
    pa = place_candidates(a, GAZ, regions=False)[0] if a != "Venice" else next(
        p for p in place_candidates("Venice", GAZ, regions=False) if p.country == "IT")
    pb = place_candidates(b, GAZ, regions=False)[0]
    assert no_road(pa, pb) == why
    assert MAX_DRIVE_KM == 5000.0


def test_coordinates_take_the_landmass_of_the_nearest_city() -> None:
    (shanghai,) = literal_points([{"place": "31.23,121.47"}])
    (mid_atlantic,) = literal_points([{"place": "10,-30"}])
    assert landmass(shanghai) == "afro-eurasia" and landmass(mid_atlantic) == ""


# --- a map click -------------------------------------------------------------------------

def test_a_click_near_a_city_takes_its_name_and_keeps_the_point() -> None:
    row = clicked_row(30.7522, 120.75)
    assert row["place"] == "Jiaxing (30.7522,120.75)"
    assert clicked_row(30.7522, 120.75, "zh")["place"] == "嘉兴 (30.7522,120.75)"
    (point,) = literal_points([row])
    assert (point.name, point.lat, point.lon, point.source) == ("Jiaxing", 30.7522, 120.75, "latlon")
    assert clicked_row(10.0, -30.0)["place"] == "10,-30"  # the open sea: coordinates only
