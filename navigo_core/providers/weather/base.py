"""The daily weather type and the protocol every weather provider implements."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from navigo_core.errors import InputError

Risk = Literal["HIGH", "MEDIUM", "LOW"]


class DailyWeather(BaseModel):
    """One day's forecast at one place, or an explicit "no forecast" (``available=False``).

    ``summary`` is an i18n key (``weather.code.*``, ``weather.no_forecast``,
    ``weather.offline``); render it with ``navigo_core.i18n.t``. Unavailable days
    carry no figures (``None``) and risk ``LOW``: nothing is ever invented.
    """

    date: date
    weather_code: int | None = None  # WMO weather interpretation code
    summary: str
    temp_min_c: float | None = None
    temp_max_c: float | None = None
    precipitation_probability: int | None = Field(None, ge=0, le=100)  # percent, the day's maximum
    risk: Risk = "LOW"
    available: bool
    provider: str
    estimated: bool = False


@runtime_checkable
class WeatherProvider(Protocol):
    name: str
    estimated: bool

    def forecast(self, lat: float, lon: float, start: date, end: date, *, today: date) -> list[DailyWeather]:
        """One :class:`DailyWeather` per day from ``start`` to ``end`` inclusive, in order.

        Days the provider cannot forecast (past days, beyond its horizon, or
        no provider at all) are returned with ``available=False``.
        Raises ``ProviderError`` subclasses on upstream failure.
        """
        ...


MAX_DAYS = 366


def days(start: date, end: date) -> list[date]:
    """Every date from ``start`` to ``end`` inclusive; ``InputError`` when the range is reversed or too long."""
    if end < start:
        raise InputError("weather.bad_range", start=start.isoformat(), end=end.isoformat())
    n = (end - start).days + 1
    if n > MAX_DAYS:
        raise InputError("weather.range_too_long", days=n, max=MAX_DAYS)
    return [start + timedelta(days=i) for i in range(n)]
