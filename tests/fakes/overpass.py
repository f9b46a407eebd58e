"""A fake Overpass API: ``GET|POST /api/interpreter`` with an Overpass QL ``data`` parameter.

It reads what NaviGo's query needs — ``[out:json]``, every ``(around:R,LAT,LON)`` and
``out center N;`` — and answers Overpass's JSON shape (``version``, ``osm3s``, ``elements``).
Elements come from ``elements`` (a list of node/way dicts; build them with :func:`node` and
:func:`way`) or, while it is None, from :data:`DEFAULT_PLACES` placed a few hundred metres around
the queried point (so any city gets places). Only elements within the radius are answered, at most N.
``remark`` (when set) is sent along, like Overpass's runtime-error remarks.

Like the real service it answers 400 with an HTML page for a query it cannot read (no ``data``,
no ``[out:json]``, no ``around``). Parsed queries are kept in ``queries`` (``radius_m``, ``lat``,
``lon``, ``limit``, ``timeout``, ``text``); every request in ``requests`` (see tests/fakes/server.py).

Run it: ``python -m tests.fakes.overpass --port 5006`` (then OVERPASS_URL=http://127.0.0.1:5006/api,
POI_ONLINE=true).
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import parse_qs

from tests.fakes.server import FakeServer, Request, Response, serve_main

_AROUND = re.compile(r"\(around:(\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)\)")
_OUT = re.compile(r"out\s+center\s+(\d+)\s*;")
_TIMEOUT = re.compile(r"\[timeout:(\d+)\]")

#: (name, tags, north offset m, east offset m) of the places answered around any point by default
DEFAULT_PLACES: list[tuple[str, dict[str, str], float, float]] = [
    ("Fake City Museum", {"tourism": "museum", "wikidata": "Q1"}, 300, 200),
    ("Old Town Gate", {"historic": "city_gate"}, -400, 100),
    ("Riverside Park", {"leisure": "park"}, 150, -600),
    ("Hilltop Viewpoint", {"tourism": "viewpoint"}, 900, 900),
    ("Modern Art Gallery", {"tourism": "gallery"}, -250, -300),
    ("Famous Shrine", {"tourism": "attraction", "historic": "shrine", "wikipedia": "en:Famous Shrine"}, 500, -200),
]


def node(osm_id: int, name: str | None, lat: float, lon: float, **tags: str) -> dict[str, Any]:
    """An Overpass node element (``name`` None: no name tag)."""
    all_tags = {**({"name": name} if name is not None else {}), **tags}
    return {"type": "node", "id": osm_id, "lat": lat, "lon": lon, "tags": all_tags}


def way(osm_id: int, name: str | None, lat: float, lon: float, **tags: str) -> dict[str, Any]:
    """An Overpass way element with its ``center`` (what ``out center`` gives)."""
    all_tags = {**({"name": name} if name is not None else {}), **tags}
    return {"type": "way", "id": osm_id, "center": {"lat": lat, "lon": lon}, "nodes": [1, 2, 3], "tags": all_tags}


def offset(lat: float, lon: float, north_m: float, east_m: float) -> tuple[float, float]:
    """The point ``north_m`` / ``east_m`` metres from ``lat``/``lon``."""
    return (lat + north_m / 111_320, lon + east_m / (111_320 * max(math.cos(math.radians(lat)), 1e-6)))


def _distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6_371_000 * math.asin(math.sqrt(a))


def _html_error(message: str, status: int = 400) -> Response:
    body = (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<html><head><title>OSM3S Response</title></head>"
            f"<body><p><strong style=\"color:#FF0000\">Error</strong>: {message}</p></body></html>")
    return Response(status, body, content_type="text/html; charset=utf-8")


class FakeOverpass(FakeServer):
    """Answers ``/api/interpreter`` (see the module docstring)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.elements: list[dict[str, Any]] | None = None
        self.remark: str | None = None
        self.queries: list[dict[str, Any]] = []
        self.route("GET", r"/api/interpreter", self._interpreter)
        self.route("POST", r"/api/interpreter", self._interpreter)

    @property
    def api_url(self) -> str:
        """What OVERPASS_URL should be: ``{url}/api``."""
        return self.url + "/api"

    def fault_body(self, status: int) -> Any:
        return (f"<html><body><p><strong>Error</strong>: injected fault: HTTP {status}. "
                f"runtime error: the server is too busy</p></body></html>")

    def _interpreter(self, req: Request, m: re.Match[str]) -> Any:
        text = req.params.get("data")
        if text is None and req.body:
            text = (parse_qs(req.body.decode("utf-8")).get("data") or [""])[-1]
        if not text:
            return _html_error("line 1: parse error: no query given (the data parameter is empty)")
        if "[out:json]" not in text:
            return _html_error("line 1: this fake only speaks [out:json]")
        arounds = _AROUND.findall(text)
        if not arounds:
            return _html_error("line 1: static error: no (around:...) filter in the query")
        r, lat, lon = (float(x) for x in arounds[0])
        out = _OUT.search(text)
        limit = int(out.group(1)) if out else 10_000
        timeout = _TIMEOUT.search(text)
        self.queries.append({"radius_m": r, "lat": lat, "lon": lon, "limit": limit,
                             "timeout": int(timeout.group(1)) if timeout else None, "text": text})
        elements = self.elements if self.elements is not None else self._defaults(lat, lon)
        near = [e for e in elements if self._within(e, lat, lon, r)][:limit]
        reply: dict[str, Any] = {
            "version": 0.6, "generator": "Overpass API 0.7.62 (fake)",
            "osm3s": {"timestamp_osm_base": "2026-01-01T00:00:00Z",
                      "copyright": "The data included in this document is from www.openstreetmap.org. "
                                   "The data is made available under ODbL."},
            "elements": near,
        }
        if self.remark:
            reply["remark"] = self.remark
        return reply

    @staticmethod
    def _defaults(lat: float, lon: float) -> list[dict[str, Any]]:
        out = []
        for i, (name, tags, north, east) in enumerate(DEFAULT_PLACES, start=1):
            plat, plon = offset(lat, lon, north, east)
            make = way if i % 2 else node
            out.append(make(1000 + i, name, round(plat, 6), round(plon, 6), **tags))
        return out

    @staticmethod
    def _within(el: dict[str, Any], lat: float, lon: float, radius_m: float) -> bool:
        src = el if "lat" in el else el.get("center") or {}
        try:
            return _distance_m(lat, lon, float(src["lat"]), float(src["lon"])) <= radius_m
        except (KeyError, TypeError, ValueError):
            return True  # a malformed element is passed on: the client must cope


if __name__ == "__main__":
    serve_main(lambda host, port: FakeOverpass(host, port), "Fake Overpass API (/api/interpreter)", 5006)
