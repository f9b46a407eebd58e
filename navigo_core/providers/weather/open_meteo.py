"""Daily forecasts from Open-Meteo (no key; only when WEATHER_ONLINE=true or WEATHER_PROVIDER=open_meteo).

One request per call, for the forecastable part of the range only::

    GET {url}/v1/forecast?latitude=..&longitude=..
        &daily=weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max
        &timezone=auto&start_date=YYYY-MM-DD&end_date=YYYY-MM-DD

Horizon: ``today`` … ``today + 15`` (:data:`HORIZON_DAYS`, Open-Meteo's 16
forecast days). Days before ``today`` or after the horizon are never requested;
they come back ``available=False`` with summary ``weather.no_forecast``. A range
entirely outside the horizon sends no request at all.

Risk of a day (the higher of the two rules):

* ``HIGH``: a severe WMO code (:data:`HIGH_RISK_CODES`: heavy freezing drizzle 57,
  heavy rain 65, freezing rain 66/67, heavy snow 75, violent showers 82, heavy
  snow showers 86, thunderstorm 95, thunderstorm with hail 96/99) or a
  precipitation probability ≥ 70 %;
* ``MEDIUM``: precipitation probability ≥ 40 %, or a moderate code
  (:data:`MEDIUM_RISK_CODES`: fog 45/48, light freezing drizzle 56, moderate
  rain 63, moderate snow 73, moderate showers 81, snow showers 85);
* ``LOW`` otherwise.

Failures (display name "Open-Meteo"): timeouts → ``ProviderTimeout``; HTTP
errors → ``ProviderHTTPError`` with Open-Meteo's ``reason``; a reply without
``daily.time`` → ``provider.bad_reply``.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import httpx

from navigo_core.errors import ProviderHTTPError
from navigo_core.providers.http import bad_reply, error_detail, get_json, json_or_none, make_client
from navigo_core.providers.weather.base import DailyWeather, Risk, days

PROVIDER = "Open-Meteo"
HORIZON_DAYS = 15  # the last forecast day is today + 15
DAILY_FIELDS = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max"
HIGH_RISK_CODES = frozenset({57, 65, 66, 67, 75, 82, 86, 95, 96, 99})
MEDIUM_RISK_CODES = frozenset({45, 48, 56, 63, 73, 81, 85})
HIGH_PROBABILITY = 70
MEDIUM_PROBABILITY = 40

#: WMO weather code → i18n summary key.
CODE_SUMMARY: dict[int, str] = {
    0: "weather.code.clear", 1: "weather.code.mainly_clear", 2: "weather.code.partly_cloudy",
    3: "weather.code.overcast", 45: "weather.code.fog", 48: "weather.code.fog",
    51: "weather.code.drizzle", 53: "weather.code.drizzle", 55: "weather.code.drizzle",
    56: "weather.code.freezing_drizzle", 57: "weather.code.freezing_drizzle",
    61: "weather.code.light_rain", 63: "weather.code.rain", 65: "weather.code.heavy_rain",
    66: "weather.code.freezing_rain", 67: "weather.code.freezing_rain",
    71: "weather.code.light_snow", 73: "weather.code.snow", 75: "weather.code.heavy_snow",
    77: "weather.code.snow_grains", 80: "weather.code.showers", 81: "weather.code.showers",
    82: "weather.code.violent_showers", 85: "weather.code.snow_showers", 86: "weather.code.snow_showers",
    95: "weather.code.thunderstorm", 96: "weather.code.thunderstorm_hail", 99: "weather.code.thunderstorm_hail",
}


def summary_key(code: int | None) -> str:
    """The i18n key describing WMO ``code`` (``weather.code.unknown`` for codes outside the table)."""
    return CODE_SUMMARY.get(code, "weather.code.unknown") if code is not None else "weather.code.unknown"


def risk_of(code: int | None, precipitation_probability: int | None) -> Risk:
    """HIGH / MEDIUM / LOW for one day (see the module docstring)."""
    p = precipitation_probability if precipitation_probability is not None else -1
    if (code is not None and code in HIGH_RISK_CODES) or p >= HIGH_PROBABILITY:
        return "HIGH"
    if (code is not None and code in MEDIUM_RISK_CODES) or p >= MEDIUM_PROBABILITY:
        return "MEDIUM"
    return "LOW"


def horizon(today: date) -> tuple[date, date]:
    """The first and last day Open-Meteo forecasts, seen from ``today``."""
    return today, today + timedelta(days=HORIZON_DAYS)


class OpenMeteoWeatherProvider:
    """Daily forecasts from Open-Meteo's ``/v1/forecast`` (see the module docstring)."""

    name = "open_meteo"
    estimated = False

    def __init__(self, base_url: str = "https://api.open-meteo.com", *, timeout_s: float = 10.0,
                 client: httpx.Client | None = None) -> None:
        self.base_url = base_url.strip().rstrip("/")
        self.client = client or make_client(timeout_s=timeout_s)

    def _unavailable(self, d: date) -> DailyWeather:
        return DailyWeather(date=d, summary="weather.no_forecast", risk="LOW", available=False, provider=self.name)

    def forecast(self, lat: float, lon: float, start: date, end: date, *, today: date) -> list[DailyWeather]:
        wanted = days(start, end)
        first, last = horizon(today)
        lo, hi = max(start, first), min(end, last)
        by_day: dict[date, DailyWeather] = {}
        if lo <= hi:
            by_day = self._fetch(lat, lon, lo, hi)
        return [by_day.get(d) or self._unavailable(d) for d in wanted]

    def _fetch(self, lat: float, lon: float, lo: date, hi: date) -> dict[date, DailyWeather]:
        params = {
            "latitude": f"{lat:.4f}", "longitude": f"{lon:.4f}", "daily": DAILY_FIELDS, "timezone": "auto",
            "start_date": lo.isoformat(), "end_date": hi.isoformat(),
        }
        data = get_json(self.client, f"{self.base_url}/v1/forecast", provider=PROVIDER, params=params,
                        on_error_status=_open_meteo_error)
        daily = data.get("daily") if isinstance(data, dict) else None
        if not isinstance(daily, dict) or not isinstance(daily.get("time"), list):
            raise bad_reply(PROVIDER, "expected daily.time[] in the forecast reply")
        times = daily["time"]

        def column(name: str) -> list[Any]:
            values = daily.get(name)
            return values if isinstance(values, list) and len(values) == len(times) else [None] * len(times)

        codes, tmax, tmin = column("weather_code"), column("temperature_2m_max"), column("temperature_2m_min")
        probs = column("precipitation_probability_max")
        out: dict[date, DailyWeather] = {}
        for i, text in enumerate(times):
            try:
                d = date.fromisoformat(str(text))
            except ValueError as exc:
                raise bad_reply(PROVIDER, f"daily.time[{i}] is not a date: {text!r}") from exc
            if not lo <= d <= hi:
                continue
            code = int(codes[i]) if codes[i] is not None else None
            prob = int(round(float(probs[i]))) if probs[i] is not None else None
            if code is None and tmax[i] is None and tmin[i] is None:
                continue  # an empty day: leave it unavailable
            out[d] = DailyWeather(
                date=d, weather_code=code, summary=summary_key(code),
                temp_min_c=float(tmin[i]) if tmin[i] is not None else None,
                temp_max_c=float(tmax[i]) if tmax[i] is not None else None,
                precipitation_probability=prob, risk=risk_of(code, prob), available=True,
                provider=self.name, estimated=False,
            )
        return out


def _open_meteo_error(response: httpx.Response) -> Exception | None:
    """Open-Meteo answers bad requests with ``{"error": true, "reason": "..."}``: keep the reason."""
    data = json_or_none(response)
    reason = data.get("reason") if isinstance(data, dict) else None
    return ProviderHTTPError(provider=PROVIDER, status=response.status_code,
                             detail=str(reason) if reason else error_detail(response))
