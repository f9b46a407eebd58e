"""A fake AMap web service: ``/v3/distance``, ``/v3/geocode/geo``, ``/v3/place/text``, ``/v3/direction/driving``.

Coordinates on the wire are GCJ-02 ``"lon,lat"``, as with AMap. Distances are
the great-circle distance between the GCJ-02 points × :data:`CIRCUITY`, at
:data:`SPEED_MPS`. A request whose ``key`` is not :attr:`FakeAmap.key` gets
AMap's ``{"status": "0", "info": "INVALID_USER_KEY", "infocode": "10001"}``.

Place answers come from ``geocodes`` / ``pois`` (dicts from the query text to
AMap-shaped result lists) that tests fill in.

Run it: ``python -m tests.fakes.amap --port 5002`` (then AMAP_BASE_URL=http://127.0.0.1:5002, AMAP_KEY=test-key).
"""

from __future__ import annotations

import re
from typing import Any

from navigo_core.geo import haversine_m
from tests.fakes.server import FakeServer, Request, serve_main

CIRCUITY = 1.3
SPEED_MPS = 40 / 3.6
KEY = "test-key"


def parse_location(text: str) -> tuple[float, float]:
    """AMap ``"lon,lat"`` → ``(lat, lon)`` (no datum change)."""
    lon, lat = text.split(",")
    return float(lat), float(lon)


def expected_distance_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The fake's road distance between two GCJ-02 ``(lat, lon)`` points."""
    return haversine_m(a[0], a[1], b[0], b[1]) * CIRCUITY


class FakeAmap(FakeServer):
    def __init__(self, host: str = "127.0.0.1", port: int = 0, key: str = KEY) -> None:
        super().__init__(host, port)
        self.key = key
        self.geocodes: dict[str, list[dict[str, Any]]] = {}
        self.pois: dict[str, list[dict[str, Any]]] = {}
        self.route("GET", r"/v3/distance", self._distance)
        self.route("GET", r"/v3/geocode/geo", self._geocode)
        self.route("GET", r"/v3/place/text", self._place_text)
        self.route("GET", r"/v3/direction/driving", self._driving)

    def _denied(self, req: Request) -> dict[str, Any] | None:
        if req.params.get("key") != self.key:
            return {"status": "0", "info": "INVALID_USER_KEY", "infocode": "10001"}
        return None

    def _distance(self, req: Request, m: re.Match[str]) -> Any:
        if (denied := self._denied(req)) is not None:
            return denied
        origins = [parse_location(o) for o in req.params["origins"].split("|")]
        dest = parse_location(req.params["destination"])
        results = []
        for i, o in enumerate(origins, start=1):
            d = expected_distance_m(o, dest)
            results.append({"origin_id": str(i), "dest_id": "1", "distance": str(round(d)),
                            "duration": str(round(d / SPEED_MPS))})
        return {"status": "1", "info": "OK", "infocode": "10000", "count": str(len(results)), "results": results}

    def _geocode(self, req: Request, m: re.Match[str]) -> Any:
        if (denied := self._denied(req)) is not None:
            return denied
        found = self.geocodes.get(req.params.get("address", ""), [])
        return {"status": "1", "info": "OK", "infocode": "10000", "count": str(len(found)), "geocodes": found}

    def _place_text(self, req: Request, m: re.Match[str]) -> Any:
        if (denied := self._denied(req)) is not None:
            return denied
        found = self.pois.get(req.params.get("keywords", ""), [])
        return {"status": "1", "info": "OK", "infocode": "10000", "count": str(len(found)), "pois": found}

    def _driving(self, req: Request, m: re.Match[str]) -> Any:
        if (denied := self._denied(req)) is not None:
            return denied
        stops = [req.params["origin"], *filter(None, req.params.get("waypoints", "").split(";")),
                 req.params["destination"]]
        steps = [{"polyline": f"{a};{b}"} for a, b in zip(stops, stops[1:])]
        return {"status": "1", "info": "OK", "infocode": "10000", "count": "1",
                "route": {"origin": stops[0], "destination": stops[-1], "paths": [{"steps": steps}]}}


if __name__ == "__main__":
    serve_main(lambda host, port: FakeAmap(host, port), "Fake AMap web service", 5002)
