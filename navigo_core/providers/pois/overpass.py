"""Named places from OpenStreetMap through the Overpass API (no key; only when POI_ONLINE=true
or POI_PROVIDER=overpass).

One request per call::

    GET {url}/interpreter?data=<Overpass QL>

The query (:func:`build_query`) asks for nodes and ways with a ``name`` within ``radius_m`` of the
point (``around:``): ``tourism`` = museum | gallery | attraction | viewpoint, any ``historic`` but
the small street furniture of :data:`MINOR_HISTORIC` (plaques, milestones, wayside crosses…), and
``leisure=park``; ``[out:json][timeout:N]`` with N the client timeout rounded up, and
``out center F;`` (ways come with their centre) with F = :data:`FETCH_FACTOR` × ``limit``, capped at
:data:`MAX_FETCH`. Replies are ranked locally — places with a Wikidata or Wikipedia tag first, then
by kind (:data:`KIND_RANK`), then by distance — de-duplicated by name and cut to ``limit``.

Names: ``name:<lang>`` when the place has one, else ``name``; cleaned and capped at
:data:`~navigo_core.providers.pois.base.MAX_NAME_CHARS` (:func:`~navigo_core.providers.pois.base.clean_name`).
Elements without a usable name or coordinates are skipped; at most :data:`MAX_ELEMENTS` are read.

Failures (display name "Overpass (OpenStreetMap)"): timeouts → ``ProviderTimeout``; HTTP errors
(429 too many requests, 504 server busy, 400 bad query) → ``ProviderHTTPError`` with the server's
text stripped of HTML; a reply without ``elements`` → ``provider.bad_reply``; a ``runtime error``
remark with no elements (the server's own time-out) → ``pois.overpass_runtime_error``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import httpx

from navigo_core.errors import ProviderError, ProviderHTTPError
from navigo_core.geo import haversine_m
from navigo_core.providers.http import bad_reply, get_json, make_client
from navigo_core.providers.pois.base import PoiKind, PointOfInterest, clean_name

PROVIDER = "Overpass (OpenStreetMap)"
SOURCE = "OpenStreetMap"
TOURISM_KINDS = ("museum", "gallery", "attraction", "viewpoint")
MINOR_HISTORIC = ("memorial", "wayside_cross", "wayside_shrine", "boundary_stone", "milestone", "plaque",
                  "stone", "marker")
KIND_RANK: dict[str, int] = {"museum": 0, "attraction": 1, "historic": 2, "gallery": 3, "viewpoint": 4, "park": 5}
FETCH_FACTOR = 4
MAX_FETCH = 200
MAX_ELEMENTS = 1000

_TAG = re.compile(r"<[^<>]*>")  # no "<" inside: linear on a body of unclosed "<" (a tag ends at its first ">")


def build_query(lat: float, lon: float, *, radius_m: int, fetch: int, timeout_s: float) -> str:
    """The Overpass QL text of one search (see the module docstring)."""
    around = f"(around:{int(radius_m)},{lat:.5f},{lon:.5f})"
    tourism = f'["tourism"~"^({"|".join(TOURISM_KINDS)})$"]["name"]'
    historic = f'["historic"]["historic"!~"^({"|".join(MINOR_HISTORIC)})$"]["name"]'
    park = '["leisure"="park"]["name"]'
    parts = [f"  {el}{flt}{around};" for flt in (tourism, historic, park) for el in ("node", "way")]
    seconds = max(1, math.ceil(timeout_s))
    return f"[out:json][timeout:{seconds}];\n(\n" + "\n".join(parts) + f"\n);\nout center {int(fetch)};"


def kind_of(tags: dict[str, Any]) -> PoiKind | None:
    """The kind of place an element's tags describe (None: none of ours)."""
    tourism = tags.get("tourism")
    if tourism in TOURISM_KINDS:
        return tourism  # one of TOURISM_KINDS
    historic = tags.get("historic")
    if isinstance(historic, str) and historic and historic not in MINOR_HISTORIC:
        return "historic"
    if tags.get("leisure") == "park":
        return "park"
    return None


def _coords(el: dict[str, Any]) -> tuple[float, float] | None:
    src = el if "lat" in el else el.get("center")
    if not isinstance(src, dict):
        return None
    try:
        lat, lon = float(src["lat"]), float(src["lon"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180) or math.isnan(lat) or math.isnan(lon):
        return None
    return lat, lon


class OverpassPoiProvider:
    """Named places from the Overpass API's ``/interpreter`` (see the module docstring)."""

    name = "overpass"
    source = SOURCE
    online = True

    def __init__(self, base_url: str = "https://overpass-api.de/api", *, timeout_s: float = 10.0,
                 radius_m: int = 5000, limit: int = 20, client: httpx.Client | None = None) -> None:
        self.base_url = base_url.strip().rstrip("/")
        self.timeout_s = timeout_s
        self.radius_m = radius_m
        self.limit = limit
        self.client = client or make_client(timeout_s=timeout_s)

    def nearby(self, lat: float, lon: float, *, lang: str = "en") -> list[PointOfInterest]:
        fetch = min(MAX_FETCH, FETCH_FACTOR * self.limit)
        query = build_query(lat, lon, radius_m=self.radius_m, fetch=fetch, timeout_s=self.timeout_s)
        data = get_json(self.client, f"{self.base_url}/interpreter", provider=PROVIDER, params={"data": query},
                        on_error_status=_overpass_error)
        elements = data.get("elements") if isinstance(data, dict) else None
        if not isinstance(elements, list):
            raise bad_reply(PROVIDER, "expected elements[] in the Overpass reply")
        remark = data.get("remark")
        if not elements and isinstance(remark, str) and "error" in remark.lower():
            raise ProviderError("pois.overpass_runtime_error", provider=PROVIDER, detail=_plain(remark))
        return self._parse(elements[:MAX_ELEMENTS], lat, lon, lang)

    def _parse(self, elements: list[Any], lat: float, lon: float, lang: str) -> list[PointOfInterest]:
        ranked: list[tuple[tuple[int, int, float], PointOfInterest]] = []
        for el in elements:
            if not isinstance(el, dict) or el.get("type") not in ("node", "way", "relation"):
                continue
            tags = el.get("tags")
            if not isinstance(tags, dict):
                continue
            kind = kind_of(tags)
            coords = _coords(el)
            name = clean_name(tags.get(f"name:{lang}")) or clean_name(tags.get("name"))
            if kind is None or coords is None or not name:
                continue
            poi = PointOfInterest(id=f"osm-{el['type']}-{el.get('id')}", name=name, kind=kind,
                                  lat=coords[0], lon=coords[1], source=SOURCE)
            notable = 0 if tags.get("wikidata") or tags.get("wikipedia") else 1
            ranked.append(((notable, KIND_RANK[kind], haversine_m(lat, lon, *coords)), poi))
        out: list[PointOfInterest] = []
        seen: set[str] = set()
        for _, poi in sorted(ranked, key=lambda x: x[0]):
            key = poi.name.casefold()
            if key in seen or poi.id in seen:
                continue
            seen.update((key, poi.id))
            out.append(poi)
            if len(out) >= self.limit:
                break
        return out


def _plain(text: str, limit: int = 200) -> str:
    text = " ".join(_TAG.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _overpass_error(response: httpx.Response) -> Exception | None:
    """Overpass answers errors in HTML (429 rate limited, 504 busy, 400 bad query): keep its words, not its tags."""
    detail = _plain(response.text) or response.reason_phrase or "no body"
    return ProviderHTTPError(provider=PROVIDER, status=response.status_code, detail=detail)
