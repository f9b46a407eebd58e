"""Legs no car can drive, and the flight estimate that replaces one.

A drive leg has **no road** when

* ``"sea"``: its ends stand on different landmasses (``navigo_core/data/landmasses.yaml``: the
  continents' road networks, island countries and island regions), e.g. Paris → Springfield,
  Illinois or Venice → Dayton, Ohio; or
* ``"too_far"``: its ends are more than :data:`MAX_DRIVE_KM` apart as the crow flies. No road leg
  between two stops of one route is that long in practice (70 hours at the wheel and more), so the
  figure is an artefact of the estimate, not a drive.

A point without a country (typed or clicked coordinates) takes the country of the nearest city of
the offline gazetteer within :data:`NEAREST_CITY_KM`; with none, its landmass is unknown and only the
distance test applies.

A **flown** leg (the user pressed "fly this leg") is a flight estimate: the great-circle distance and
the offline flight estimator's block time (:func:`navigo_core.providers.flights.offline.estimate_duration_min`:
30 minutes plus 800 km/h). It is labelled a flight estimate everywhere, never a drive.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any


from navigo_core.geo import haversine_m
from navigo_core.providers.flights.offline import estimate_duration_min
from navigo_core.providers.places.base import Place
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider
from navigo_core.route.models import NoRoad
from navigo_core.safe_yaml import read_yaml

__all__ = ["MAX_DRIVE_KM", "flight_estimate", "landmass", "no_road"]

MAX_DRIVE_KM = 5000.0
NEAREST_CITY_KM = 100.0
_DATA = Path(__file__).resolve().parents[1] / "data" / "landmasses.yaml"
_GAZ = GazetteerPlaceProvider()


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data = read_yaml(_DATA)
    data["region_map"] = {(cc, admin): name for cc, admin, name in data.get("regions", [])}
    return data


def _country_admin(place: Place) -> tuple[str, str]:
    if place.country:
        return place.country.upper(), place.admin
    near = _GAZ.nearest(place.lat, place.lon, within_km=NEAREST_CITY_KM)
    return (near.country.upper(), near.admin) if near is not None else ("", "")


def landmass(place: Place) -> str:
    """The name of the landmass (road network) ``place`` stands on; "" when unknown."""
    cc, admin = _country_admin(place)
    if not cc:
        return ""
    data = _data()
    if (region := data["region_map"].get((cc, admin))) is not None:
        return str(region)
    if cc in data["islands"]:
        return str(data["islands"][cc])
    continent = _GAZ.country_facts(cc)[0]
    if continent in data.get("own_landmass_continents", []):
        return f"island-{cc.lower()}"
    return str(data["continents"].get(continent, ""))


def no_road(a: Place, b: Place) -> NoRoad:
    """Why no road leads from ``a`` to ``b``: ``"sea"``, ``"too_far"``, or "" when a drive is possible."""
    land_a, land_b = landmass(a), landmass(b)
    if land_a and land_b and land_a != land_b:
        return "sea"
    if haversine_m(a.lat, a.lon, b.lat, b.lon) > MAX_DRIVE_KM * 1000:
        return "too_far"
    return ""


def flight_estimate(a: Place, b: Place) -> tuple[float, float]:
    """``(distance_m, duration_s)`` of a flight from ``a`` to ``b``: great circle and block time (estimates)."""
    metres = haversine_m(a.lat, a.lon, b.lat, b.lon)
    return metres, estimate_duration_min(metres / 1000) * 60.0
