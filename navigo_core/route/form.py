"""Turn the Route page's stop table into a RouteRequest, and back.

Rows are dicts with ``place`` (name or ``lat,lon``), optional ``pin`` (1-based
position among the stops) and optional ``group`` (stops that share a group
label are kept together, in table order). Rows whose place is empty are rows
the user has not filled in and are dropped; a row holding only spaces is kept
so the guardrail can name it.

A click on the map becomes a row too (:func:`clicked_row`): ``Jiaxing (30.7522,120.75)`` when the
offline gazetteer knows a city within :data:`CLICK_NAME_KM` (the point keeps its coordinates and
takes the name), else the bare ``30.7522,120.75`` (shown on the map as "point 30.75220, 120.75000").
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from navigo_core.errors import InputError
from navigo_core.providers.places.base import Place
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider
from navigo_core.providers.places.latlon import format_latlon, parse_latlon
from navigo_core.route.models import RouteRequest

CLICK_NAME_KM = 15.0  # a clicked point takes the name of a city this close
_GAZ = GazetteerPlaceProvider()


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def request_from_rows(rows: Iterable[dict[str, Any]], **fields: Any) -> RouteRequest:
    """A RouteRequest from table rows plus the other form ``fields``."""
    stops: list[str] = []
    pins: dict[int, int] = {}
    groups: dict[str, list[int]] = {}
    for row in rows:
        place = row.get("place")
        if _blank(place):
            continue
        idx = len(stops)
        stops.append(str(place))
        pin = row.get("pin")
        if pin is not None and not _blank(pin):
            pins[idx] = int(pin)
        group = row.get("group")
        if not _blank(group) and str(group).strip():
            groups.setdefault(str(group).strip(), []).append(idx)
    return RouteRequest(stops=stops, pins=pins, groups=[g for g in groups.values() if len(g) > 1], **fields)


def rows_from_request(req: RouteRequest) -> list[dict[str, Any]]:
    """The table rows that reproduce ``req`` (used to reopen a saved route)."""
    group_of: dict[int, str] = {}
    for gi, group in enumerate(req.groups, start=1):
        for idx in group:
            group_of[idx] = f"G{gi}"
    return [
        {"place": stop, "pin": req.pins.get(i), "group": group_of.get(i)}
        for i, stop in enumerate(req.stops)
    ]


def clicked_row(lat: float, lon: float, lang: str = "en") -> dict[str, Any]:
    """The stop-table row for a point clicked on the map (see the module docstring)."""
    near = _GAZ.nearest(lat, lon, within_km=CLICK_NAME_KM, lang=lang)
    coords = format_latlon(lat, lon)
    text = f"{near.display_name(lang)} ({coords})" if near is not None else coords
    return {"place": text, "pin": None, "group": None}


def literal_points(rows: Iterable[dict[str, Any]]) -> list[Place]:
    """The places of the rows written as coordinates (typed, or clicked on the map), in table order."""
    out: list[Place] = []
    for row in rows:
        place = row.get("place")
        if _blank(place):
            continue
        try:
            point = parse_latlon(str(place))
        except InputError:
            continue
        if point is not None:
            out.append(point)
    return out


def pending_points(rows: Iterable[dict[str, Any]], solved: Iterable[Place]) -> list[Place]:
    """The coordinate rows (e.g. map clicks) that are not among the ``solved`` route's points: stops added
    since the route was optimised, drawn as "+" markers until it is optimised again."""
    done = {(round(p.lat, 6), round(p.lon, 6)) for p in solved}
    return [p for p in literal_points(rows) if (round(p.lat, 6), round(p.lon, 6)) not in done]


def out_of_date(solved: RouteRequest, current: RouteRequest | None) -> bool:
    """True when the form (``current``; None when it does not make a valid request) differs from the
    request the shown result was solved for."""
    return current is None or current.model_dump() != solved.model_dump()
