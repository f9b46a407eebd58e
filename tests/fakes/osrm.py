"""A fake OSRM server: ``/table`` and ``/route`` in OSRM's JSON shapes, no map data needed.

Figures are synthetic but consistent: road distance = great-circle distance ×
:data:`CIRCUITY`, duration = distance ÷ :data:`SPEED_MPS`. Tests compute the
same numbers with :func:`expected_distance_m` / :func:`expected_duration_s`.

Knobs (besides the fault injection every :class:`FakeServer` has):

* ``unreachable``: pairs ``(i, j)`` whose table cell is ``null`` (OSRM's "no route").
* ``error``: ``(code, message)`` → answer ``{"code": code, "message": message}``
  with HTTP ``error_http_status`` (400, as OSRM does; set 200 to test a 200 reply
  with a non-"Ok" code).

Run it for browser tests::

    python -m tests.fakes.osrm --port 5001     # then OSRM_URL=http://127.0.0.1:5001
"""

from __future__ import annotations

import re
from typing import Any

from navigo_core.geo import haversine_m
from tests.fakes.server import FakeServer, Request, Response, serve_main

CIRCUITY = 1.25
SPEED_MPS = 50 / 3.6  # 50 km/h
POINTS_PER_LEG = 5  # route geometry: this many points per leg (plus the end point)


def expected_distance_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The fake's road distance between two ``(lat, lon)`` points."""
    return haversine_m(a[0], a[1], b[0], b[1]) * CIRCUITY


def expected_duration_s(a: tuple[float, float], b: tuple[float, float]) -> float:
    return expected_distance_m(a, b) / SPEED_MPS


def parse_coordinates(text: str) -> list[tuple[float, float]]:
    """OSRM's ``lon,lat;lon,lat`` path segment → ``[(lat, lon), ...]``."""
    out = []
    for pair in text.split(";"):
        lon, lat = pair.split(",")
        out.append((float(lat), float(lon)))
    return out


class FakeOsrm(FakeServer):
    """Answers ``GET /table/v1/{profile}/{coords}`` and ``GET /route/v1/{profile}/{coords}``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.unreachable: set[tuple[int, int]] = set()
        self.error: tuple[str, str] | None = None
        self.error_http_status = 400
        self.route("GET", r"/table/v1/(?P<profile>[^/]+)/(?P<coords>[^/]+)", self._table)
        self.route("GET", r"/route/v1/(?P<profile>[^/]+)/(?P<coords>[^/]+)", self._route)

    def fault_body(self, status: int) -> Any:
        return {"code": "InternalError", "message": f"injected fault: HTTP {status}"}

    def _coords(self, m: re.Match[str]) -> list[tuple[float, float]] | Response:
        try:
            return parse_coordinates(m["coords"])
        except ValueError:
            return Response(400, {"code": "InvalidUrl", "message": f"URL string malformed close to: {m['coords'][:20]}"})

    def _table(self, req: Request, m: re.Match[str]) -> Any:
        if self.error:
            return Response(self.error_http_status, {"code": self.error[0], "message": self.error[1]})
        pts = self._coords(m)
        if isinstance(pts, Response):
            return pts
        annotations = req.params.get("annotations", "duration").split(",")
        n = len(pts)

        def cell(i: int, j: int, f: Any) -> float | None:
            if (i, j) in self.unreachable:
                return None
            return 0.0 if i == j else round(f(pts[i], pts[j]), 1)

        body: dict[str, Any] = {
            "code": "Ok",
            "sources": [{"location": [lon, lat], "name": "", "distance": 0.0} for lat, lon in pts],
            "destinations": [{"location": [lon, lat], "name": "", "distance": 0.0} for lat, lon in pts],
        }
        if "duration" in annotations:
            body["durations"] = [[cell(i, j, expected_duration_s) for j in range(n)] for i in range(n)]
        if "distance" in annotations:
            body["distances"] = [[cell(i, j, expected_distance_m) for j in range(n)] for i in range(n)]
        return body

    def _route(self, req: Request, m: re.Match[str]) -> Any:
        if self.error:
            return Response(self.error_http_status, {"code": self.error[0], "message": self.error[1]})
        pts = self._coords(m)
        if isinstance(pts, Response):
            return pts
        line: list[list[float]] = []
        legs: list[dict[str, Any]] = []
        for (lat0, lon0), (lat1, lon1) in zip(pts, pts[1:]):
            for k in range(POINTS_PER_LEG):
                f = k / POINTS_PER_LEG
                line.append([round(lon0 + f * (lon1 - lon0), 6), round(lat0 + f * (lat1 - lat0), 6)])
            d = expected_distance_m((lat0, lon0), (lat1, lon1))
            legs.append({"distance": round(d, 1), "duration": round(d / SPEED_MPS, 1), "steps": [], "summary": ""})
        line.append([pts[-1][1], pts[-1][0]])
        total = sum(float(leg["distance"]) for leg in legs)
        return {
            "code": "Ok",
            "routes": [{
                "geometry": {"type": "LineString", "coordinates": line},
                "legs": legs, "distance": total, "duration": round(total / SPEED_MPS, 1),
                "weight_name": "routability", "weight": round(total / SPEED_MPS, 1),
            }],
            "waypoints": [{"location": [lon, lat], "name": "", "distance": 0.0} for lat, lon in pts],
        }


if __name__ == "__main__":
    serve_main(lambda host, port: FakeOsrm(host, port), "Fake OSRM (/table, /route)", 5001)
