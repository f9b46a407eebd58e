"""Place search and resolution.

* :func:`make_place_provider` — the provider ``settings.effective_places_provider`` names:
  ``gazetteer`` (offline, default), ``amap`` (AMAP_KEY), ``nominatim`` (NOMINATIM_URL).
* :func:`resolve_place` — text (or a picked ``Place``) → exactly one ``Place``, or a
  precise ``InputError`` / ``PlaceResolutionError``.
* :func:`parse_latlon`, :func:`format_latlon`, :func:`place_to_text` — coordinate literals.
"""

from __future__ import annotations

import httpx

from navigo_core.config import Settings
from navigo_core.errors import ProviderNotConfigured
from navigo_core.providers.places.amap import AmapPlaceProvider
from navigo_core.providers.places.base import Place, PlaceProvider
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider, load_index
from navigo_core.providers.places.latlon import format_latlon, parse_latlon, place_to_text
from navigo_core.providers.places.nominatim import NominatimPlaceProvider
from navigo_core.providers.places.resolve import resolve_place

__all__ = [
    "AmapPlaceProvider", "GazetteerPlaceProvider", "NominatimPlaceProvider", "Place", "PlaceProvider",
    "format_latlon", "load_index", "make_place_provider", "parse_latlon", "place_to_text", "resolve_place",
]

PLACE_PROVIDERS = ("gazetteer", "amap", "nominatim")


def make_place_provider(settings: Settings, *, name: str | None = None,
                        client: httpx.Client | None = None) -> PlaceProvider:
    """The place provider ``name`` (default: ``settings.effective_places_provider``).

    ``client`` is passed to HTTP providers (tests inject one; by default each
    provider makes its own with ``settings.provider_timeout_s``). Raises
    ``ProviderNotConfigured`` naming the setting to set when the chosen provider
    lacks its key or URL, or when ``name`` is unknown.
    """
    choice = settings.effective_places_provider if name in (None, "", "auto") else name
    timeout = settings.provider_timeout_s
    if choice == "gazetteer":
        return GazetteerPlaceProvider()
    if choice == "amap":
        if not settings.amap_key:
            raise ProviderNotConfigured("provider.amap_not_configured", provider="AMap")
        return AmapPlaceProvider(settings.amap_key, base_url=settings.amap_base_url, timeout_s=timeout, client=client)
    if choice == "nominatim":
        if not settings.nominatim_url:
            raise ProviderNotConfigured("provider.nominatim_not_configured", provider="Nominatim")
        return NominatimPlaceProvider(settings.nominatim_url, timeout_s=timeout, client=client)
    raise ProviderNotConfigured("place.unknown_provider", provider="places", name=choice)
