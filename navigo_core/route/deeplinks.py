"""Navigation deep links: hand a planned route to AMap, Google Maps or OpenStreetMap.

Every service limits how many intermediate points ("vias") one link may carry,
so a long route is split into several links. Consecutive links share their end
points: link *k* ends where link *k + 1* starts, so following them in order
drives the whole route.

==========  ======================  ==========  =================================
service     URL                     vias/link   coordinates
==========  ======================  ==========  =================================
AMap web    ``uri.amap.com``        1           GCJ-02 inside China, else as is
AMap app    ``amapuri://``          16          GCJ-02 inside China, else as is
Google      ``google.com/maps/dir`` 9           WGS-84
OSM         ``openstreetmap.org``   0 (a leg)   WGS-84
==========  ======================  ==========  =================================

Query strings are assembled by hand so each separator (``,`` ``|`` ``;``) stays
literal while the parts between them — above all place names — are
percent-encoded on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import quote

from pydantic import BaseModel, Field

from navigo_core.geo import wgs84_to_gcj02
from navigo_core.providers.places.base import Place

AMAP_WEB_MAX_VIAS = 1
AMAP_APP_MAX_VIAS = 16
GOOGLE_MAX_WAYPOINTS = 9
OSM_MAX_VIAS = 0

AMAP_WEB_URL = "https://uri.amap.com/navigation"
AMAP_APP_URL = "amapuri://route/plan/"
GOOGLE_URL = "https://www.google.com/maps/dir/"
OSM_URL = "https://www.openstreetmap.org/directions"
SOURCE_APP = "navigo"


class DeepLinks(BaseModel):
    """Links that open the route in a navigation service, in driving order per service."""

    amap_web: list[str] = Field(default_factory=list)
    amap_app: list[str] = Field(default_factory=list)
    google: list[str] = Field(default_factory=list)
    osm: list[str] = Field(default_factory=list)


def split_route(n_points: int, max_vias: int) -> list[tuple[int, int]]:
    """Index spans ``(first, last)`` (both inclusive) of the links for a route of ``n_points``.

    Each span holds at most ``max_vias`` points strictly between its ends, and
    each span starts at the previous span's last point. Fewer than two points
    make no route, hence no spans.
    """
    if max_vias < 0:
        raise ValueError("max_vias must be >= 0")
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n_points - 1:
        end = min(start + max_vias + 1, n_points - 1)
        spans.append((start, end))
        start = end
    return spans


def _num(value: float) -> str:
    """A coordinate with 6 decimals (about 0.1 m)."""
    return f"{value:.6f}"


def _enc(text: str) -> str:
    """Percent-encode one query-string part completely (separators included)."""
    return quote(text, safe="")


def _query(params: Sequence[tuple[str, str]]) -> str:
    """Join already-encoded ``(key, value)`` pairs into a query string."""
    return "&".join(f"{key}={value}" for key, value in params)


def _gcj(place: Place) -> tuple[float, float]:
    """AMap's coordinates of a place: GCJ-02 inside China, unchanged outside."""
    return wgs84_to_gcj02(place.lat, place.lon)


def _amap_name(place: Place) -> str:
    """The place name for AMap (Chinese when known), list separators swapped for look-alikes.

    AMap splits ``lon,lat,name`` on commas and via lists on ``|``; a name holding
    either would be cut, so they become ``，`` and ``｜``.
    """
    return (place.name_zh or place.name).strip().replace(",", "，").replace("|", "｜")


def _amap_web_point(place: Place) -> str:
    lat, lon = _gcj(place)
    name = _amap_name(place)
    coords = f"{_num(lon)},{_num(lat)}"
    return f"{coords},{_enc(name)}" if name else coords


def amap_web_link(points: Sequence[Place]) -> str:
    """One AMap web navigation URI from ``points[0]`` to ``points[-1]`` (at most one via)."""
    if len(points) < 2 or len(points) - 2 > AMAP_WEB_MAX_VIAS:
        raise ValueError(f"an AMap web link takes 2 to {AMAP_WEB_MAX_VIAS + 2} points")
    params = [("from", _amap_web_point(points[0])), ("to", _amap_web_point(points[-1]))]
    params += [("via", _amap_web_point(p)) for p in points[1:-1]]
    params += [
        ("mode", "car"),
        ("policy", "1"),
        ("src", SOURCE_APP),
        ("coordinate", "gaode"),
        ("callnative", "0"),
    ]
    return f"{AMAP_WEB_URL}?{_query(params)}"


def amap_app_link(points: Sequence[Place]) -> str:
    """One AMap app route-plan URI (GCJ-02, ``dev=0``; at most 16 vias)."""
    if len(points) < 2 or len(points) - 2 > AMAP_APP_MAX_VIAS:
        raise ValueError(f"an AMap app link takes 2 to {AMAP_APP_MAX_VIAS + 2} points")
    params: list[tuple[str, str]] = [("sourceApplication", SOURCE_APP)]
    for prefix, place in (("s", points[0]), ("d", points[-1])):
        lat, lon = _gcj(place)
        params += [(f"{prefix}lat", _num(lat)), (f"{prefix}lon", _num(lon))]
        if name := _amap_name(place):
            params.append((f"{prefix}name", _enc(name)))
    vias = points[1:-1]
    if vias:
        coords = [_gcj(p) for p in vias]
        params += [
            ("vialons", "|".join(_num(lon) for _, lon in coords)),
            ("vialats", "|".join(_num(lat) for lat, _ in coords)),
            ("vianames", "|".join(_enc(_amap_name(p)) for p in vias)),
        ]
    params += [("dev", "0"), ("t", "0")]
    return f"{AMAP_APP_URL}?{_query(params)}"


def _latlon(place: Place) -> str:
    return f"{_num(place.lat)},{_num(place.lon)}"


def google_link(points: Sequence[Place]) -> str:
    """One Google Maps directions URL (WGS-84; at most 9 waypoints)."""
    if len(points) < 2 or len(points) - 2 > GOOGLE_MAX_WAYPOINTS:
        raise ValueError(f"a Google Maps link takes 2 to {GOOGLE_MAX_WAYPOINTS + 2} points")
    params = [("api", "1"), ("origin", _latlon(points[0])), ("destination", _latlon(points[-1]))]
    if len(points) > 2:
        params.append(("waypoints", "%7C".join(_latlon(p) for p in points[1:-1])))
    params.append(("travelmode", "driving"))
    return f"{GOOGLE_URL}?{_query(params)}"


def osm_link(points: Sequence[Place]) -> str:
    """One openstreetmap.org directions URL for a single leg (WGS-84)."""
    if len(points) != 2:
        raise ValueError("an OpenStreetMap link takes exactly 2 points")
    route = ";".join(_latlon(p) for p in points)
    return f"{OSM_URL}?{_query([('engine', 'fossgis_osrm_car'), ('route', route)])}"


def _links(points: Sequence[Place], max_vias: int, build: Callable[[Sequence[Place]], str]) -> list[str]:
    return [build(points[first : last + 1]) for first, last in split_route(len(points), max_vias)]


def build_deep_links(points: Sequence[Place]) -> DeepLinks:
    """Links for the ordered route ``points`` (origin first, destination last).

    Fewer than two points make no route: every list is empty.
    """
    return DeepLinks(
        amap_web=_links(points, AMAP_WEB_MAX_VIAS, amap_web_link),
        amap_app=_links(points, AMAP_APP_MAX_VIAS, amap_app_link),
        google=_links(points, GOOGLE_MAX_WAYPOINTS, google_link),
        osm=_links(points, OSM_MAX_VIAS, osm_link),
    )
