"""A fake Open-Meteo: ``GET /v1/forecast`` in Open-Meteo's JSON shape.

Daily values come from ``days`` (``{date: {"weather_code": .., "temperature_2m_max": ..,
"temperature_2m_min": .., "precipitation_probability_max": ..}}``, any value may be
None) and, for dates not scripted, ``default_day`` (mainly clear, 20/12 °C, 10 %).
Only the ``daily`` fields the request names are answered.

Like the real service it answers 400 ``{"error": true, "reason": ...}`` for a bad
latitude/longitude, a missing ``daily`` or bad dates, and — when ``today`` is set
— for dates outside ``today … today + 15`` (the forecast horizon).

Run it: ``python -m tests.fakes.open_meteo --port 5005`` (then
OPEN_METEO_URL=http://127.0.0.1:5005, WEATHER_ONLINE=true).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from tests.fakes.server import FakeServer, Request, Response, serve_main

UNITS = {"time": "iso8601", "weather_code": "wmo code", "temperature_2m_max": "°C", "temperature_2m_min": "°C",
         "precipitation_probability_max": "%"}
DEFAULT_DAY = {"weather_code": 1, "temperature_2m_max": 20.0, "temperature_2m_min": 12.0,
               "precipitation_probability_max": 10}


def _bad(reason: str) -> Response:
    return Response(400, {"error": True, "reason": reason})


class FakeOpenMeteo(FakeServer):
    """Answers ``GET /v1/forecast`` (see the module docstring)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.days: dict[date, dict[str, Any]] = {}
        self.default_day: dict[str, Any] = dict(DEFAULT_DAY)
        self.today: date | None = None
        self.timezone = "Asia/Shanghai"
        self.route("GET", r"/v1/forecast", self._forecast)

    def fault_body(self, status: int) -> Any:
        return {"error": True, "reason": f"injected fault: HTTP {status}"}

    def _forecast(self, req: Request, m: re.Match[str]) -> Any:
        p = req.params
        try:
            lat, lon = float(p["latitude"]), float(p["longitude"])
        except (KeyError, ValueError):
            return _bad("Parameter 'latitude' and 'longitude' must be floating point numbers")
        if not -90 <= lat <= 90:
            return _bad(f"Latitude must be in range of -90 to 90°. Given: {lat}.")
        if not -180 <= lon <= 180:
            return _bad(f"Longitude must be in range of -180 to 180°. Given: {lon}.")
        fields = [f for f in p.get("daily", "").split(",") if f]
        if not fields:
            return _bad("Parameter 'daily' is required")
        unknown = [f for f in fields if f not in UNITS]
        if unknown:
            return _bad(f"Cannot initialize WeatherVariable from invalid String value {unknown[0]}")
        try:
            start, end = date.fromisoformat(p["start_date"]), date.fromisoformat(p["end_date"])
        except (KeyError, ValueError):
            return _bad("Parameter 'start_date' and 'end_date' must both be set as yyyy-mm-dd")
        if end < start:
            return _bad("Parameter 'end_date' must be after 'start_date'")
        if self.today is not None:
            last = self.today + timedelta(days=15)
            for name, d in (("start_date", start), ("end_date", end)):
                if not self.today <= d <= last:
                    return _bad(f"Parameter '{name}' is out of allowed range from {self.today} to {last}")
        dates = [start + timedelta(days=i) for i in range((end - start).days + 1)]
        daily: dict[str, list[Any]] = {"time": [d.isoformat() for d in dates]}
        for f in fields:
            daily[f] = [self.days.get(d, self.default_day).get(f) for d in dates]
        return {
            "latitude": round(lat, 4), "longitude": round(lon, 4), "generationtime_ms": 0.1,
            "utc_offset_seconds": 28800, "timezone": self.timezone if p.get("timezone") == "auto" else "GMT",
            "timezone_abbreviation": "CST", "elevation": 10.0,
            "daily_units": {"time": UNITS["time"], **{f: UNITS[f] for f in fields}},
            "daily": daily,
        }


if __name__ == "__main__":
    serve_main(lambda host, port: FakeOpenMeteo(host, port), "Fake Open-Meteo (/v1/forecast)", 5005)
