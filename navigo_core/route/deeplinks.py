"""Navigation deep links: hand a planned route to AMap, Google Maps or OpenStreetMap.

Every service limits how many intermediate points ("vias") one link may carry,
so a long route is split into several links. Consecutive links share their end
points: link *k* ends where link *k + 1* starts, so following them in order
drives the whole route.

==========  ======================  ==========  =================================
service     URL                     vias/link   points
==========  ======================  ==========  =================================
AMap web    ``uri.amap.com``        1           GCJ-02 coordinates and the name
AMap app    ``amapuri://``          16          GCJ-02 coordinates and the name
Google      ``google.com/maps/dir`` 9           the place's name ("Suzhou, Jiangsu,
                                                China"); WGS-84 for coordinates
OSM         ``openstreetmap.org``   0 (a leg)   WGS-84
==========  ======================  ==========  =================================

Links fit the place:

* AMap only covers China: its links are made only for a stretch whose every point lies in China
  (mainland, Hong Kong, Macao, Taiwan); elsewhere the lists are empty.
* Google geocodes names well, and a name reads better than ``31.230416,121.473701`` in its
  directions panel; a point that was typed or clicked as coordinates keeps its coordinates.
* Legs no car can drive (flights, legs across the sea) split the route: each drivable stretch gets
  its own links, and those legs get none.

:attr:`DeepLinks.legs` holds one link per leg and service (the per-segment links a page folds away
under the whole-route ones).

Query strings are assembled by hand so each separator (``,`` ``|`` ``;``) stays
literal while the parts between them — above all place names — are
percent-encoded on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import quote

from pydantic import BaseModel, Field

from navigo_core.geo import in_china, wgs84_to_gcj02
from navigo_core.providers.places.base import Place
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider

AMAP_WEB_MAX_VIAS = 1
AMAP_APP_MAX_VIAS = 16
GOOGLE_MAX_WAYPOINTS = 9
OSM_MAX_VIAS = 0

AMAP_WEB_URL = "https://uri.amap.com/navigation"
AMAP_APP_URL = "amapuri://route/plan/"
GOOGLE_URL = "https://www.google.com/maps/dir/"
OSM_URL = "https://www.openstreetmap.org/directions"
SOURCE_APP = "navigo"
CHINA = frozenset({"CN", "HK", "MO", "TW"})  # AMap's coverage
NEAREST_CITY_KM = 100.0  # a point without a country takes the country of the nearest city this close
_GAZ = GazetteerPlaceProvider()


class LegLinks(BaseModel):
    """The links of one leg (empty strings where a service does not fit it)."""

    start: str  # names, for the page's labels
    end: str
    drivable: bool = True  # False: a flight or a leg across the sea; no driving links
    amap_web: str = ""
    google: str = ""
    osm: str = ""


class DeepLinks(BaseModel):
    """Links that open the route in a navigation service, in driving order per service.

    Each list is the route in as few links as the service allows (one link: the whole route; several:
    consecutive parts, each starting where the previous one ended). ``legs``: one entry per leg.
    """

    amap_web: list[str] = Field(default_factory=list)
    amap_app: list[str] = Field(default_factory=list)
    google: list[str] = Field(default_factory=list)
    osm: list[str] = Field(default_factory=list)
    legs: list[LegLinks] = Field(default_factory=list)

    def whole(self, service: str) -> str:
        """The one link that opens the whole route in ``service``, or "" when the route needs several."""
        links: list[str] = getattr(self, service)
        return links[0] if len(links) == 1 and all(leg.drivable for leg in self.legs) else ""


def in_amap_area(place: Place) -> bool:
    """True when ``place`` lies where AMap has maps: China (mainland, Hong Kong, Macao, Taiwan)."""
    if place.country:
        return place.country.upper() in CHINA
    near = _GAZ.nearest(place.lat, place.lon, within_km=NEAREST_CITY_KM)
    return near.country in CHINA if near is not None else in_china(place.lat, place.lon)


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


def _google_point(place: Place) -> str:
    """A point for Google: its name with admin area and country ("Suzhou, Jiangsu, China"), encoded; the
    WGS-84 coordinates for a point typed or clicked as coordinates, or one without a name."""
    if place.source in ("latlon", "map") or not place.name.strip():
        return _latlon(place)
    return _enc(place.label_in("en"))


def google_link(points: Sequence[Place]) -> str:
    """One Google Maps directions URL (place names, else WGS-84; at most 9 waypoints)."""
    if len(points) < 2 or len(points) - 2 > GOOGLE_MAX_WAYPOINTS:
        raise ValueError(f"a Google Maps link takes 2 to {GOOGLE_MAX_WAYPOINTS + 2} points")
    params = [("api", "1"), ("origin", _google_point(points[0])), ("destination", _google_point(points[-1]))]
    if len(points) > 2:
        params.append(("waypoints", "%7C".join(_google_point(p) for p in points[1:-1])))
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


def _runs(n_points: int, drivable: Sequence[bool]) -> list[tuple[int, int]]:
    """Index spans ``(first, last)`` of the stretches joined by drivable legs (at least one leg each)."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(n_points - 1):
        if not drivable[i]:
            if i > start:
                runs.append((start, i))
            start = i + 1
    if n_points - 1 > start:
        runs.append((start, n_points - 1))
    return runs


def build_deep_links(points: Sequence[Place], *, drivable: Sequence[bool] | None = None,
                     lang: str = "en") -> DeepLinks:
    """Links for the ordered route ``points`` (origin first, destination last).

    ``drivable[i]`` says whether leg ``i`` (``points[i]`` → ``points[i + 1]``) can be driven (default: all);
    the others split the route and get no driving links. AMap links exist only for stretches inside China.
    Fewer than two points make no route: every list is empty. ``lang`` names the legs in ``legs``.
    """
    points = list(points)
    legs_ok = list(drivable) if drivable is not None else [True] * max(len(points) - 1, 0)
    if len(legs_ok) != max(len(points) - 1, 0):
        raise ValueError(f"expected {max(len(points) - 1, 0)} drivable flags, got {len(legs_ok)}")
    china = [in_amap_area(p) for p in points]
    out = DeepLinks()
    for first, last in _runs(len(points), legs_ok):
        run = points[first : last + 1]
        out.google += _links(run, GOOGLE_MAX_WAYPOINTS, google_link)
        out.osm += _links(run, OSM_MAX_VIAS, osm_link)
        if all(china[first : last + 1]):
            out.amap_web += _links(run, AMAP_WEB_MAX_VIAS, amap_web_link)
            out.amap_app += _links(run, AMAP_APP_MAX_VIAS, amap_app_link)
    for i, ok in enumerate(legs_ok):
        a, b = points[i], points[i + 1]
        out.legs.append(LegLinks(
            start=a.display_name(lang), end=b.display_name(lang), drivable=ok,
            google=google_link([a, b]) if ok else "", osm=osm_link([a, b]) if ok else "",
            amap_web=amap_web_link([a, b]) if ok and china[i] and china[i + 1] else ""))
    return out
