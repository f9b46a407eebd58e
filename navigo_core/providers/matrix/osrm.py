"""Road distances, durations and route lines from an OSRM server (``OSRM_URL``).

* Matrix: ONE request for all pairs,
  ``GET {url}/table/v1/{profile}/{lon,lat;lon,lat;...}?annotations=duration,distance``.
* Geometry: ONE request for the chosen order,
  ``GET {url}/route/v1/{profile}/{lon,lat;...}?overview=full&geometries=geojson``;
  GeoJSON coordinates are ``[lon, lat]`` and are returned as ``(lat, lon)``.

Failures (all ``ProviderError`` subclasses, display name "OSRM"):

* no answer within ``timeout_s`` → ``ProviderTimeout`` (``seconds``);
* HTTP 4xx/5xx → ``ProviderHTTPError`` (``status``; OSRM's ``message`` as detail);
* ``code`` other than ``"Ok"`` (``NoTable``, ``NoRoute``, ``InvalidQuery``...) →
  ``ProviderHTTPError("matrix.osrm_error")`` with OSRM's code and message;
* a ``null`` cell (no route between two points) → ``ProviderError("matrix.unreachable")``
  naming both points.

OSRM is WGS-84 everywhere, so no datum conversion is needed.
"""

from __future__ import annotations

from typing import Any

import httpx

from navigo_core.errors import ProviderError, ProviderHTTPError
from navigo_core.providers.http import bad_reply, get_json, json_or_none, make_client
from navigo_core.providers.matrix.base import Matrix
from navigo_core.providers.places.base import Place

PROVIDER = "OSRM"


def osrm_coordinates(points: list[Place]) -> str:
    """``lon,lat;lon,lat;...`` as OSRM paths want them (6 decimals, ~0.1 m)."""
    return ";".join(f"{p.lon:.6f},{p.lat:.6f}" for p in points)


class OsrmMatrixProvider:
    """Distances and durations from OSRM's ``/table`` service; route lines from ``/route``."""

    name = "osrm"
    estimated = False

    def __init__(self, base_url: str, *, profile: str = "driving", timeout_s: float = 10.0,
                 client: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.profile = profile
        self.client = client or make_client(timeout_s=timeout_s)

    def _get(self, service: str, points: list[Place], params: dict[str, str]) -> dict[str, Any]:
        url = f"{self.base_url}/{service}/v1/{self.profile}/{osrm_coordinates(points)}"
        data = get_json(self.client, url, provider=PROVIDER, params=params, on_error_status=_osrm_error)
        if not isinstance(data, dict):
            raise bad_reply(PROVIDER, f"expected a JSON object from /{service}")
        if data.get("code") != "Ok":
            raise ProviderHTTPError("matrix.osrm_error", provider=PROVIDER, status=data.get("code") or "no code",
                                    detail=data.get("message") or "no message")
        return data

    def matrix(self, points: list[Place]) -> Matrix:
        """All pairs in one ``/table`` request (none for fewer than two points)."""
        n = len(points)
        if n < 2:
            return Matrix(distance_m=[[0.0] * n for _ in range(n)], duration_s=[[0.0] * n for _ in range(n)],
                          provider=self.name, estimated=False, requests=0)
        data = self._get("table", points, {"annotations": "duration,distance"})
        durations, distances = data.get("durations"), data.get("distances")
        if durations is None or distances is None or not _is_square(durations, n) or not _is_square(distances, n):
            raise bad_reply(PROVIDER, f"/table did not return {n}×{n} 'durations' and 'distances' "
                                      "(is the server older than OSRM 5.17, without distance annotations?)")
        dur = [[0.0] * n for _ in range(n)]
        dist = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                t, d = durations[i][j], distances[i][j]
                if t is None or d is None:
                    raise ProviderError("matrix.unreachable", provider=PROVIDER,
                                        origin=points[i].label, destination=points[j].label)
                dur[i][j], dist[i][j] = float(t), float(d)
        return Matrix(distance_m=dist, duration_s=dur, provider=self.name, estimated=False, requests=1)

    def geometry(self, points: list[Place]) -> list[tuple[float, float]] | None:
        """The road line through ``points`` in order, from one ``/route`` request; None for fewer than two points."""
        if len(points) < 2:
            return None
        data = self._get("route", points, {"overview": "full", "geometries": "geojson"})
        try:
            coords = data["routes"][0]["geometry"]["coordinates"]
            return [(float(lat), float(lon)) for lon, lat, *_ in coords]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise bad_reply(PROVIDER, f"/route without routes[0].geometry.coordinates ({exc!r})") from exc


def _osrm_error(response: httpx.Response) -> Exception | None:
    """OSRM answers bad requests with HTTP 400 and ``{"code": "NoTable", "message": ...}``: keep both.

    Server errors (5xx) stay generic ``ProviderHTTPError`` with the HTTP status.
    """
    data = json_or_none(response) if response.status_code < 500 else None
    if isinstance(data, dict) and data.get("code"):
        return ProviderHTTPError("matrix.osrm_error", provider=PROVIDER,
                                 status=f"{data['code']}, HTTP {response.status_code}",
                                 detail=data.get("message") or "no message")
    return None


def _is_square(rows: Any, n: int) -> bool:
    return isinstance(rows, list) and len(rows) == n and all(isinstance(r, list) and len(r) == n for r in rows)
