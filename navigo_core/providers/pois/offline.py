"""The offline POI provider: no network and no invented places.

It knows no places (``[]`` always); the itinerary then names kinds of activity for a city
without catalogue data ("a museum of your choice") and says so. Set POI_ONLINE=true (or
POI_PROVIDER=overpass) for real named places from OpenStreetMap.
"""

from __future__ import annotations

from navigo_core.providers.pois.base import PointOfInterest


class OfflinePoiProvider:
    name = "offline"
    source = ""
    online = False

    def nearby(self, lat: float, lon: float, *, lang: str = "en") -> list[PointOfInterest]:
        return []
