"""Daily weather forecasts.

:func:`make_weather_provider` picks ``offline`` (the default: no forecast,
never invented weather) or ``open_meteo`` (keyless; chosen by auto only when
WEATHER_ONLINE=true, so a default run never calls the internet).
"""

from __future__ import annotations

import httpx

from navigo_core.config import Settings
from navigo_core.errors import ProviderNotConfigured
from navigo_core.providers.weather.base import DailyWeather, WeatherProvider
from navigo_core.providers.weather.offline import OfflineWeatherProvider
from navigo_core.providers.weather.open_meteo import HORIZON_DAYS, OpenMeteoWeatherProvider, risk_of, summary_key

__all__ = [
    "DailyWeather", "HORIZON_DAYS", "OfflineWeatherProvider", "OpenMeteoWeatherProvider", "WeatherProvider",
    "effective_weather_provider", "make_weather_provider", "risk_of", "summary_key",
]

WEATHER_PROVIDERS = ("offline", "open_meteo")


def effective_weather_provider(settings: Settings) -> str:
    """``settings.weather_provider``, with auto resolved: open_meteo when WEATHER_ONLINE is true, else offline."""
    if settings.weather_provider != "auto":
        return settings.weather_provider
    return "open_meteo" if settings.weather_online else "offline"


def make_weather_provider(settings: Settings, *, name: str | None = None,
                          client: httpx.Client | None = None) -> WeatherProvider:
    """The weather provider ``name`` ("offline" | "open_meteo"; default from the settings, see above).

    Raises ``ProviderNotConfigured`` when ``name`` is unknown.
    """
    choice = effective_weather_provider(settings) if name in (None, "", "auto") else name
    if choice == "offline":
        return OfflineWeatherProvider()
    if choice == "open_meteo":
        if not settings.open_meteo_url:
            raise ProviderNotConfigured("weather.open_meteo_not_configured", provider="Open-Meteo")
        return OpenMeteoWeatherProvider(settings.open_meteo_url, timeout_s=settings.provider_timeout_s, client=client)
    raise ProviderNotConfigured("weather.unknown_provider", provider="weather", name=choice)
