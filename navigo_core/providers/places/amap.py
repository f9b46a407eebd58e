"""AMap (高德) web-service place search, plus the AMap helpers the matrix provider shares.

Endpoints (v3, JSON, ``key`` as a query parameter):

* ``GET /v3/geocode/geo?address=...`` — structured addresses and admin names
  ("苏州", "江苏省苏州市"). Tried first.
* ``GET /v3/place/text?keywords=...`` — points of interest ("东方明珠"). Used
  when geocoding finds nothing.

AMap speaks GCJ-02; every coordinate is converted with :func:`gcj02_to_wgs84`
on the way in (and :func:`wgs84_to_gcj02` on the way out), so ``Place`` stays
WGS-84. A reply with ``status`` "0" raises ``ProviderHTTPError`` carrying
AMap's ``infocode`` and ``info`` text (e.g. ``10001 INVALID_USER_KEY``).
AMap covers mainland China (and little else); names come back in Chinese.
"""

from __future__ import annotations

from typing import Any

import httpx

from navigo_core.errors import ProviderHTTPError
from navigo_core.geo import gcj02_to_wgs84, wgs84_to_gcj02
from navigo_core.providers.http import bad_reply, get_json, make_client
from navigo_core.providers.places.base import Place
from navigo_core.providers.places.gazetteer import china_admin, country_name_zh, split_qualifiers

AMAP_DEFAULT_URL = "https://restapi.amap.com"
PROVIDER = "AMap"  # display name in messages
MAX_PAGE = 25  # AMap's largest page size for place/text


def amap_get(client: httpx.Client, base_url: str, path: str, key: str, params: dict[str, Any]) -> dict[str, Any]:
    """``GET base_url + path`` with ``key``; the JSON body, or ``ProviderHTTPError`` when AMap says status 0."""
    data = get_json(client, f"{base_url.rstrip('/')}{path}", provider=PROVIDER,
                    params={**params, "key": key, "output": "JSON"})
    if not isinstance(data, dict):
        raise bad_reply(PROVIDER, f"expected a JSON object from {path}")
    if str(data.get("status")) != "1":
        raise ProviderHTTPError("provider.amap_error", provider=PROVIDER,
                                status=data.get("infocode") or "?", detail=data.get("info") or "unknown error")
    return data


def to_amap_location(lat: float, lon: float) -> str:
    """A WGS-84 point as AMap's GCJ-02 ``"lon,lat"`` (6 decimals)."""
    glat, glon = wgs84_to_gcj02(lat, lon)
    return f"{glon:.6f},{glat:.6f}"


def from_amap_location(text: str) -> tuple[float, float]:
    """AMap's GCJ-02 ``"lon,lat"`` as WGS-84 ``(lat, lon)``; ``ValueError`` when malformed."""
    lon_s, lat_s = str(text).split(",")
    return gcj02_to_wgs84(float(lat_s), float(lon_s))


def _s(value: Any) -> str:
    """AMap sends ``[]`` for empty text fields; make every field a plain string."""
    return value.strip() if isinstance(value, str) else ""


def _cn_place(name: str, location: str, province: str, *, ref: str, source: str = "amap") -> Place:
    lat, lon = from_amap_location(location)
    en_zh = china_admin(province) if province else None
    admin, admin_zh = en_zh if en_zh else (province, province)
    return Place(name=name, name_zh=name, lat=lat, lon=lon, admin=admin, admin_zh=admin_zh,
                 country="CN", country_name="China", country_name_zh=country_name_zh("CN"),
                 source=source, ref=ref)


class AmapPlaceProvider:
    """Place search with AMap (see the module docstring)."""

    name = "amap"

    def __init__(self, key: str, *, base_url: str = AMAP_DEFAULT_URL, timeout_s: float = 10.0,
                 client: httpx.Client | None = None) -> None:
        self.key = key
        self.base_url = base_url.rstrip("/")
        self.client = client or make_client(timeout_s=timeout_s)

    def search(self, query: str, *, limit: int = 10) -> list[Place]:
        """Geocode ``query``; when that finds nothing, search POIs. "苏州, 江苏" is sent as "江苏苏州"."""
        name, qualifiers = split_qualifiers(query.strip())
        if not name:
            return []
        address = "".join(reversed(qualifiers)) + name
        data = amap_get(self.client, self.base_url, "/v3/geocode/geo", self.key, {"address": address})
        try:
            places = [
                _cn_place(_s(g.get("formatted_address")) or address, g["location"], _s(g.get("province")),
                          ref=_s(g.get("adcode")))
                for g in data.get("geocodes") or []
            ]
            if places:
                return places[:limit]
            params: dict[str, Any] = {"keywords": name, "offset": min(limit, MAX_PAGE), "page": 1,
                                      "extensions": "base"}
            if qualifiers:
                params.update(city=qualifiers[0], citylimit="true")
            data = amap_get(self.client, self.base_url, "/v3/place/text", self.key, params)
            return [
                _cn_place(_s(p.get("name")), p["location"], _s(p.get("pname")), ref=_s(p.get("id")))
                for p in data.get("pois") or []
            ][:limit]
        except (KeyError, ValueError, TypeError) as exc:
            raise bad_reply(PROVIDER, f"a result without a valid location ({exc!r})") from exc
