"""The flight offer type and the protocol every flight provider implements."""

from __future__ import annotations

from datetime import date, datetime
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator


class FlightOffer(BaseModel):
    """One bookable (or, when ``estimated``, merely plausible) one-way flight.

    ``depart_at`` / ``arrive_at`` are timezone-aware, in the local time of the
    departure and arrival airport. ``price`` is the total for
    ``price_is_total_for`` passengers, in ``currency``.
    """

    id: str
    origin: str = Field(min_length=3, max_length=3)  # IATA airport code
    destination: str = Field(min_length=3, max_length=3)
    depart_at: datetime
    arrive_at: datetime
    duration_min: int = Field(ge=0)
    carrier: str  # IATA airline code, or "estimate"
    flight_number: str = ""
    stops: int = Field(0, ge=0)
    cabin: str = "economy"
    price: float = Field(ge=0)
    currency: str = "USD"
    price_is_total_for: int = Field(1, ge=1)  # passengers the price covers
    estimated: bool
    provider: str

    @field_validator("depart_at", "arrive_at")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        if v.tzinfo is None or v.utcoffset() is None:
            raise ValueError("flight times must be timezone-aware")
        return v


@runtime_checkable
class FlightProvider(Protocol):
    name: str
    estimated: bool

    def search(self, origin: str, destination: str, depart_date: date, *, adults: int, children: int = 0,
               cabin: str = "economy", max_offers: int = 10) -> list[FlightOffer]:
        """One-way offers from ``origin`` to ``destination`` (IATA codes) leaving on ``depart_date``.

        Returns ``[]`` when no flight makes sense (the offline estimator: airports
        closer than :data:`~navigo_core.providers.flights.offline.MIN_FLIGHT_KM`).
        Raises ``ProviderError`` subclasses on upstream failure.
        """
        ...


CABINS = ("economy", "premium_economy", "business", "first")
