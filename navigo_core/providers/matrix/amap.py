"""Road distances and durations from AMap's web service (``AMAP_KEY``), mainland China only.

Matrix: AMap has no all-pairs endpoint. ``GET /v3/distance?type=1`` (driving)
takes up to 100 origins but ONE destination, so an n×n matrix costs n requests,
one per destination column (``Matrix.requests == n``; more than 100 points
need ⌈n/100⌉ requests per column). This is why OSRM is preferred when both
are configured: mind AMap's daily quota on large routes.

Geometry: ``GET /v3/direction/driving`` with up to 16 waypoints per request;
longer routes are split into consecutive legs of at most 18 points, one
request each, and the polylines joined.

AMap speaks GCJ-02: points are converted WGS-84 → GCJ-02 for requests and
route lines GCJ-02 → WGS-84 on the way back.
"""

from __future__ import annotations

from typing import Any

import httpx

from navigo_core.errors import ProviderError
from navigo_core.providers.http import bad_reply, make_client
from navigo_core.providers.matrix.base import Matrix
from navigo_core.providers.places.amap import (
    AMAP_DEFAULT_URL,
    PROVIDER,
    amap_get,
    from_amap_location,
    to_amap_location,
)
from navigo_core.providers.places.base import Place

MAX_ORIGINS = 100  # AMap v3/distance limit
MAX_WAYPOINTS = 16  # AMap v3/direction/driving limit


class AmapMatrixProvider:
    """Driving distances from AMap ``v3/distance``, one request per destination (see the module docstring)."""

    name = "amap"
    estimated = False

    def __init__(self, key: str, *, base_url: str = AMAP_DEFAULT_URL, timeout_s: float = 10.0,
                 client: httpx.Client | None = None) -> None:
        self.key = key
        self.base_url = base_url.rstrip("/")
        self.client = client or make_client(timeout_s=timeout_s)

    def _column(self, points: list[Place], locations: list[str], j: int, start: int,
                dist: list[list[float]], dur: list[list[float]]) -> None:
        """Fill column ``j`` for origins ``start … start+MAX_ORIGINS`` with one request."""
        chunk = range(start, min(start + MAX_ORIGINS, len(points)))
        data = amap_get(self.client, self.base_url, "/v3/distance", self.key, {
            "origins": "|".join(locations[i] for i in chunk), "destination": locations[j], "type": 1,
        })
        got: set[int] = set()
        for r in data.get("results") or []:
            try:
                i = chunk[int(r["origin_id"]) - 1]
                if str(r.get("code", "0")) not in ("0", ""):
                    continue  # AMap marks a pair it could not route; reported below
                d, t = float(r["distance"]), float(r["duration"])
            except (KeyError, ValueError, TypeError, IndexError) as exc:
                raise bad_reply(PROVIDER, f"/v3/distance result {r!r} ({exc!r})") from exc
            dist[i][j], dur[i][j] = d, t
            got.add(i)
        for i in chunk:
            if i != j and i not in got:
                raise ProviderError("matrix.unreachable", provider=PROVIDER,
                                    origin=points[i].label, destination=points[j].label)

    def matrix(self, points: list[Place]) -> Matrix:
        """n requests for n points (one per destination column); zero diagonal."""
        n = len(points)
        dist = [[0.0] * n for _ in range(n)]
        dur = [[0.0] * n for _ in range(n)]
        if n < 2:
            return Matrix(distance_m=dist, duration_s=dur, provider=self.name, estimated=False, requests=0)
        locations = [to_amap_location(p.lat, p.lon) for p in points]
        requests = 0
        for j in range(n):
            for start in range(0, n, MAX_ORIGINS):
                self._column(points, locations, j, start, dist, dur)
                requests += 1
        for i in range(n):
            dist[i][i] = dur[i][i] = 0.0
        return Matrix(distance_m=dist, duration_s=dur, provider=self.name, estimated=False, requests=requests)

    def geometry(self, points: list[Place]) -> list[tuple[float, float]] | None:
        """The driving line through ``points`` in order (WGS-84), from ``/v3/direction/driving``."""
        if len(points) < 2:
            return None
        line: list[tuple[float, float]] = []
        step = MAX_WAYPOINTS + 1
        for start in range(0, len(points) - 1, step):
            leg = points[start: start + step + 1]
            params: dict[str, Any] = {
                "origin": to_amap_location(leg[0].lat, leg[0].lon),
                "destination": to_amap_location(leg[-1].lat, leg[-1].lon),
                "extensions": "base",
            }
            if len(leg) > 2:
                params["waypoints"] = ";".join(to_amap_location(p.lat, p.lon) for p in leg[1:-1])
            data = amap_get(self.client, self.base_url, "/v3/direction/driving", self.key, params)
            try:
                steps = data["route"]["paths"][0]["steps"]
                for s in steps:
                    for pair in str(s["polyline"]).split(";"):
                        pt = from_amap_location(pair)
                        if not line or line[-1] != pt:
                            line.append(pt)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise bad_reply(PROVIDER, f"/v3/direction/driving without route.paths[0].steps ({exc!r})") from exc
        return line
