"""Named points of interest (museums, sights, parks, viewpoints) near a city.

:func:`make_poi_provider` picks ``offline`` (the default: no places, never invented; the
itinerary names kinds of activity) or ``overpass`` (OpenStreetMap, keyless; chosen by auto only
when POI_ONLINE=true, so a default run never calls the internet). The planner's itinerary asks
it only for a city without place data in its own catalogue.
"""

from __future__ import annotations

import httpx

from navigo_core.config import Settings
from navigo_core.errors import ProviderNotConfigured
from navigo_core.providers.pois.base import MAX_NAME_CHARS, PoiProvider, PointOfInterest, clean_name
from navigo_core.providers.pois.offline import OfflinePoiProvider
from navigo_core.providers.pois.overpass import OverpassPoiProvider, build_query

__all__ = [
    "MAX_NAME_CHARS", "OfflinePoiProvider", "OverpassPoiProvider", "PoiProvider", "PointOfInterest",
    "build_query", "clean_name", "effective_poi_provider", "make_poi_provider",
]

POI_PROVIDERS = ("offline", "overpass")


def effective_poi_provider(settings: Settings) -> str:
    """``settings.poi_provider``, with auto resolved: overpass when POI_ONLINE is true, else offline."""
    if settings.poi_provider != "auto":
        return settings.poi_provider
    return "overpass" if settings.poi_online else "offline"


def make_poi_provider(settings: Settings, *, name: str | None = None,
                      client: httpx.Client | None = None) -> PoiProvider:
    """The POI provider ``name`` ("offline" | "overpass"; default from ``settings``, see above).

    Raises ``ProviderNotConfigured`` when ``name`` is unknown or OVERPASS_URL is empty.
    """
    choice = effective_poi_provider(settings) if name in (None, "", "auto") else name
    if choice == "offline":
        return OfflinePoiProvider()
    if choice == "overpass":
        if not settings.overpass_url.strip():
            raise ProviderNotConfigured("pois.overpass_not_configured", provider="Overpass")
        return OverpassPoiProvider(settings.overpass_url, timeout_s=settings.provider_timeout_s,
                                   radius_m=settings.poi_radius_m, limit=settings.poi_max_results, client=client)
    raise ProviderNotConfigured("pois.unknown_provider", provider="points of interest", name=choice)
