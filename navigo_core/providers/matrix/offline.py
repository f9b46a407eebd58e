"""The offline distance/duration estimate: no network, always available, always labelled an estimate.

Distance
    road distance = great-circle distance × ``circuity_factor`` (setting
    CIRCUITY_FACTOR, default 1.3). Road networks are longer than the straight
    line by a fairly stable ratio: published circuity studies (e.g. Ballou,
    Rahardja & Sakai 2002) report about 1.2–1.4 for most countries, with
    short urban trips at the high end. 1.3 is a middle value.

Duration
    road distance ÷ an average speed that rises with leg length, because a
    short leg is all city streets, lights and parking while a long leg is
    mostly highway. The speed is interpolated linearly in log(distance)
    between these anchors (road km → km/h), and held flat beyond the ends:

    ========  ======  =====================================================
    road km   km/h    typical leg
    ========  ======  =====================================================
    ≤ 1       15      inside a district: lights, turns, parking
    5         25      across a city centre
    20        40      across a city, partly on ring roads or arterials
    50        60      city to suburb / neighbouring town, mostly expressway
    150       80      intercity on highways, entering and leaving cities
    ≥ 500     90      long-distance highway driving (no rest stops counted)
    ========  ======  =====================================================

    The speed grows slower than the distance, so a longer leg never takes
    less time (a unit test checks this). The figures are deliberately
    ordinary car speeds: fine for ordering stops and rough timing, never a
    substitute for a routing engine (``estimated=True`` says so).

A matrix costs no request (``requests=0``); the diagonal is zero; ``geometry``
returns None (pages draw straight lines).
"""

from __future__ import annotations

import math

from navigo_core.geo import haversine_m
from navigo_core.providers.matrix.base import Matrix
from navigo_core.providers.places.base import Place

DEFAULT_CIRCUITY = 1.3
#: (road distance in km, average speed in km/h); see the module docstring.
SPEED_ANCHORS: tuple[tuple[float, float], ...] = (
    (1.0, 15.0), (5.0, 25.0), (20.0, 40.0), (50.0, 60.0), (150.0, 80.0), (500.0, 90.0),
)


def average_speed_kmh(road_km: float) -> float:
    """The model's average speed for a leg of ``road_km`` road kilometres."""
    if road_km <= SPEED_ANCHORS[0][0]:
        return SPEED_ANCHORS[0][1]
    for (d0, v0), (d1, v1) in zip(SPEED_ANCHORS, SPEED_ANCHORS[1:]):
        if road_km <= d1:
            f = (math.log(road_km) - math.log(d0)) / (math.log(d1) - math.log(d0))
            return v0 + f * (v1 - v0)
    return SPEED_ANCHORS[-1][1]


def estimate_duration_s(road_m: float) -> float:
    """Estimated driving time in seconds for ``road_m`` metres of road."""
    if road_m <= 0:
        return 0.0
    km = road_m / 1000.0
    return km / average_speed_kmh(km) * 3600.0


class OfflineMatrixProvider:
    """Great-circle × circuity distances with the speed model above."""

    name = "offline"
    estimated = True

    def __init__(self, circuity_factor: float = DEFAULT_CIRCUITY) -> None:
        if circuity_factor < 1.0:
            raise ValueError(
                f"circuity_factor must be ≥ 1 (roads are never shorter than the great circle), got {circuity_factor}")
        self.circuity_factor = circuity_factor

    def road_distance_m(self, a: Place, b: Place) -> float:
        """Estimated road distance from ``a`` to ``b`` in metres."""
        return haversine_m(a.lat, a.lon, b.lat, b.lon) * self.circuity_factor

    def matrix(self, points: list[Place]) -> Matrix:
        n = len(points)
        dist = [[0.0] * n for _ in range(n)]
        dur = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                d = self.road_distance_m(points[i], points[j])
                t = estimate_duration_s(d)
                dist[i][j] = dist[j][i] = d
                dur[i][j] = dur[j][i] = t
        return Matrix(distance_m=dist, duration_s=dur, provider=self.name, estimated=True, requests=0)

    def geometry(self, points: list[Place]) -> list[tuple[float, float]] | None:
        """None: the offline engine knows no roads, so pages draw straight lines."""
        return None
