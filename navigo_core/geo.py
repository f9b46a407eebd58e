"""Small geodesy helpers: great-circle distance and the WGS-84 ⇄ GCJ-02 transform.

GCJ-02 is the obfuscated datum required by Chinese map services (AMap). The
forward transform is the standard published one; it applies only inside
mainland China (outside, coordinates are returned unchanged). The inverse is
solved iteratively to sub-millimetre precision.
"""

from __future__ import annotations

import math

EARTH_RADIUS_M = 6_371_008.8  # mean Earth radius (IUGG)

_A = 6378245.0  # Krasovsky 1940 semi-major axis, as used by GCJ-02
_EE = 0.00669342162296594323  # its first eccentricity squared


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def in_china(lat: float, lon: float) -> bool:
    """The rough mainland-China box the GCJ-02 transform is applied in."""
    return 73.66 < lon < 135.05 and 3.86 < lat < 53.55


def _transform_lat(x: float, y: float) -> float:
    ret = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * math.sqrt(abs(x))
    ret += (20.0 * math.sin(6.0 * x * math.pi) + 20.0 * math.sin(2.0 * x * math.pi)) * 2.0 / 3.0
    ret += (20.0 * math.sin(y * math.pi) + 40.0 * math.sin(y / 3.0 * math.pi)) * 2.0 / 3.0
    ret += (160.0 * math.sin(y / 12.0 * math.pi) + 320 * math.sin(y * math.pi / 30.0)) * 2.0 / 3.0
    return ret


def _transform_lon(x: float, y: float) -> float:
    ret = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * math.sqrt(abs(x))
    ret += (20.0 * math.sin(6.0 * x * math.pi) + 20.0 * math.sin(2.0 * x * math.pi)) * 2.0 / 3.0
    ret += (20.0 * math.sin(x * math.pi) + 40.0 * math.sin(x / 3.0 * math.pi)) * 2.0 / 3.0
    ret += (150.0 * math.sin(x / 12.0 * math.pi) + 300.0 * math.sin(x / 30.0 * math.pi)) * 2.0 / 3.0
    return ret


def wgs84_to_gcj02(lat: float, lon: float) -> tuple[float, float]:
    """WGS-84 → GCJ-02 as ``(lat, lon)``; unchanged outside China."""
    if not in_china(lat, lon):
        return lat, lon
    dlat = _transform_lat(lon - 105.0, lat - 35.0)
    dlon = _transform_lon(lon - 105.0, lat - 35.0)
    radlat = lat / 180.0 * math.pi
    magic = math.sin(radlat)
    magic = 1 - _EE * magic * magic
    sqrtmagic = math.sqrt(magic)
    dlat = (dlat * 180.0) / ((_A * (1 - _EE)) / (magic * sqrtmagic) * math.pi)
    dlon = (dlon * 180.0) / (_A / sqrtmagic * math.cos(radlat) * math.pi)
    return lat + dlat, lon + dlon


def gcj02_to_wgs84(lat: float, lon: float) -> tuple[float, float]:
    """GCJ-02 → WGS-84 as ``(lat, lon)`` by fixed-point iteration (error < 1e-9°)."""
    if not in_china(lat, lon):
        return lat, lon
    wlat, wlon = lat, lon
    for _ in range(30):
        glat, glon = wgs84_to_gcj02(wlat, wlon)
        dlat, dlon = glat - lat, glon - lon
        wlat, wlon = wlat - dlat, wlon - dlon
        if abs(dlat) < 1e-10 and abs(dlon) < 1e-10:
            break
    return wlat, wlon
