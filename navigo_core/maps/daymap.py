"""One map per itinerary day: the day's real places in the order the route solver gives.

A day starts and ends at the traveller's base (the destination city's centre, as the place
provider gave it); its activities that are real places of the catalogue (they carry coordinates)
are ordered by :func:`navigo_core.route.solver.optimize` on great-circle distances. Each leg gets
a labelled estimate: a walk when it is short, else a drive at city speed (no road data offline).
Days with no real place get no map (the page says so). Pure logic: the Plan page draws it with
the Route page's map code (:func:`navigo_core.maps.build_route_map`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from navigo_core.geo import haversine_m
from navigo_core.planner.state import ItineraryDay, PlannerState
from navigo_core.providers.places import Place
from navigo_core.route.deeplinks import DeepLinks, build_deep_links
from navigo_core.route.solver import optimize

WALK_MAX_KM = 2.0  # a leg up to this long is walked
WALK_KMH = 4.5
CITY_DRIVE_KMH = 25.0  # door to door in city traffic (an estimate, labelled as one)
DETOUR = 1.3  # streets are longer than the straight line


@dataclass(frozen=True)
class DayLeg:
    km: float  # along streets, estimated (straight line × DETOUR)
    minutes: float
    mode: str  # "walk" | "drive"


@dataclass(frozen=True)
class DayMap:
    day: int
    points: list[Place]  # visiting order: the base first and last
    legs: list[DayLeg] = field(default_factory=list)
    links: DeepLinks = field(default_factory=DeepLinks)


def _leg(a: Place, b: Place) -> DayLeg:
    km = round(haversine_m(a.lat, a.lon, b.lat, b.lon) / 1000 * DETOUR, 1)
    mode = "walk" if km <= WALK_MAX_KM else "drive"
    minutes = round(km / (WALK_KMH if mode == "walk" else CITY_DRIVE_KMH) * 60)
    return DayLeg(km, float(minutes), mode)


def day_map(day: ItineraryDay, base: Place, lang: str = "en") -> DayMap | None:
    """The map of ``day`` from and back to ``base`` (None: the day has no real place)."""
    stops = [Place(name=a.title, lat=a.lat, lon=a.lon, country=base.country, source="catalogue")
             for a in day.activities if a.kind == "activity" and a.lat is not None and a.lon is not None]
    if not stops:
        return None
    points = [base, *stops]
    cost = [[haversine_m(p.lat, p.lon, q.lat, q.lon) for q in points] for p in points]
    order = optimize(cost, 0, 0).order  # a round trip from the base
    ordered = [points[i] for i in order]
    legs = [_leg(a, b) for a, b in zip(ordered, ordered[1:])]
    return DayMap(day.day, ordered, legs, build_deep_links(ordered, lang=lang))


def day_maps(state: PlannerState, lang: str = "en") -> dict[int, DayMap]:
    """Day number → its map, for the days that have real places."""
    req = state.user_request
    base = getattr(req, "destination", None)
    if base is None or not state.itinerary:
        return {}
    out = {}
    for day in state.itinerary:
        m = day_map(day, base, lang)
        if m is not None:
            out[day.day] = m
    return out


__all__ = ["DayLeg", "DayMap", "day_map", "day_maps"]
