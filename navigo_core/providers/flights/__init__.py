"""Flight offers.

:func:`make_flight_provider` picks ``offline`` (great-circle estimate, default,
labelled ``estimated``) or ``duffel`` (DUFFEL_ACCESS_TOKEN, real offers).
:func:`airports_for_city` maps a city to its main airport(s);
:func:`recommend` picks one offer for a trip's start date.
"""

from __future__ import annotations

import httpx

from navigo_core.config import Settings
from navigo_core.errors import ProviderNotConfigured
from navigo_core.providers.flights.base import CABINS, FlightOffer, FlightProvider
from navigo_core.providers.flights.duffel import DuffelFlightProvider
from navigo_core.providers.flights.offline import (
    MIN_FLIGHT_KM,
    OfflineFlightProvider,
    airports_for_city,
    estimate_duration_min,
    estimate_fare_usd,
)
from navigo_core.providers.flights.recommend import recommend

__all__ = [
    "CABINS", "DuffelFlightProvider", "FlightOffer", "FlightProvider", "MIN_FLIGHT_KM", "OfflineFlightProvider",
    "airports_for_city", "effective_flights_provider", "estimate_duration_min", "estimate_fare_usd",
    "make_flight_provider", "recommend",
]

FLIGHT_PROVIDERS = ("offline", "duffel")


def effective_flights_provider(settings: Settings) -> str:
    """``settings.flights_provider``, with auto resolved: duffel when DUFFEL_ACCESS_TOKEN is set, else offline."""
    if settings.flights_provider != "auto":
        return settings.flights_provider
    return "duffel" if settings.duffel_access_token else "offline"


def make_flight_provider(settings: Settings, *, name: str | None = None,
                         client: httpx.Client | None = None) -> FlightProvider:
    """The flight provider ``name`` ("offline" | "duffel"; default from the settings, see above).

    Raises ``ProviderNotConfigured`` when Duffel is chosen without a token, or ``name`` is unknown.
    """
    choice = effective_flights_provider(settings) if name in (None, "", "auto") else name
    if choice == "offline":
        return OfflineFlightProvider()
    if choice == "duffel":
        if not settings.duffel_access_token:
            raise ProviderNotConfigured("flights.duffel_not_configured", provider="Duffel")
        return DuffelFlightProvider(settings.duffel_access_token, base_url=settings.duffel_base_url,
                                    timeout_s=settings.provider_timeout_s, client=client)
    raise ProviderNotConfigured("flights.unknown_provider", provider="flights", name=choice)
