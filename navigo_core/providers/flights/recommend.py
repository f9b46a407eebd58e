"""Pick one flight to suggest for a trip."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from navigo_core.providers.flights.base import FlightOffer


def recommend(offers: Iterable[FlightOffer], start_date: date) -> FlightOffer | None:
    """The offer to suggest for a trip starting on ``start_date``, in one pass; None when there are none.

    Order of preference: arriving no later than ``start_date`` (local arrival
    date ≤ start date), then the earlier arrival, the lower price, the earlier
    departure.
    """
    def preference(f: FlightOffer) -> tuple[bool, datetime, float, datetime]:
        return f.arrive_at.date() > start_date, f.arrive_at, f.price, f.depart_at

    best = min(offers, key=preference, default=None)  # a variable: the return type would mislead min's inference
    return best
