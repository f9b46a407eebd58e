"""The offline weather provider: no network and no invented weather.

Every day comes back ``available=False`` with summary ``weather.offline``
("no forecast: offline"), risk ``LOW`` and no figures. Set WEATHER_ONLINE=true
(or WEATHER_PROVIDER=open_meteo) for real forecasts.
"""

from __future__ import annotations

from datetime import date

from navigo_core.providers.weather.base import DailyWeather, days


class OfflineWeatherProvider:
    name = "offline"
    estimated = False  # nothing is estimated: there is simply no forecast

    def forecast(self, lat: float, lon: float, start: date, end: date, *, today: date) -> list[DailyWeather]:
        return [DailyWeather(date=d, summary="weather.offline", risk="LOW", available=False, provider=self.name)
                for d in days(start, end)]
