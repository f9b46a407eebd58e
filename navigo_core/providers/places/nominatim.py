"""Place search with any Nominatim-compatible geocoder (``NOMINATIM_URL``).

One request: ``GET {url}/search?q=...&format=jsonv2&addressdetails=1&namedetails=1``.
Names come in English (``accept-language``); ``namedetails`` adds the Chinese
name when OpenStreetMap has one, and China's provinces get their Chinese names
from NaviGo's own table. Every request carries NaviGo's User-Agent, as
Nominatim's usage policy requires (public instances also allow at most one
request per second: point NOMINATIM_URL at your own instance for heavy use).
"""

from __future__ import annotations

from typing import Any

import httpx

from navigo_core.providers.http import bad_reply, get_json, make_client
from navigo_core.providers.places.base import Place
from navigo_core.providers.places.gazetteer import china_admin, country_name_zh

PROVIDER = "Nominatim"
_ADMIN_KEYS = ("state", "province", "region", "state_district", "county")


def _place(item: dict[str, Any]) -> Place:
    address = item.get("address") or {}
    names = item.get("namedetails") or {}
    name = names.get("name:en") or item.get("name") or str(item.get("display_name", "")).split(",")[0].strip()
    admin = next((address[k] for k in _ADMIN_KEYS if address.get(k)), "")
    cc = str(address.get("country_code", "")).upper()
    cn = china_admin(admin) if cc == "CN" and admin else None
    ref = f"{item['osm_type']}/{item['osm_id']}" if item.get("osm_type") and item.get("osm_id") else str(item.get("place_id", ""))
    return Place(
        name=name, lat=float(item["lat"]), lon=float(item["lon"]),
        admin=cn[0] if cn else admin, admin_zh=cn[1] if cn else "",
        country=cc, country_name=address.get("country", ""), country_name_zh=country_name_zh(cc) if cc else "",
        name_zh=names.get("name:zh", ""), source="nominatim", ref=ref,
    )


class NominatimPlaceProvider:
    """Place search with a Nominatim server (see the module docstring)."""

    name = "nominatim"

    def __init__(self, base_url: str, *, timeout_s: float = 10.0, client: httpx.Client | None = None,
                 language: str = "en") -> None:
        self.base_url = base_url.rstrip("/")
        self.language = language
        self.client = client or make_client(timeout_s=timeout_s)

    def search(self, query: str, *, limit: int = 10) -> list[Place]:
        """Every result Nominatim returns for ``query``, in its ranking order (at most ``limit``)."""
        q = query.strip()
        if not q:
            return []
        data = get_json(self.client, f"{self.base_url}/search", provider=PROVIDER, params={
            "q": q, "format": "jsonv2", "limit": limit, "addressdetails": 1, "namedetails": 1,
            "accept-language": self.language,
        })
        if not isinstance(data, list):
            raise bad_reply(PROVIDER, "expected a JSON list of results from /search")
        try:
            return [_place(item) for item in data][:limit]
        except (KeyError, ValueError, TypeError) as exc:
            raise bad_reply(PROVIDER, f"a result without valid lat/lon ({exc!r})") from exc
