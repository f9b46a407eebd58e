"""Named checks that a rule in ``data/rules.yaml`` may require (``check: <name>``).

A check says what a regex cannot: it reads the message with the request parser. Each is
``text -> detail | None`` (None: no match) and runs only after the rule's keywords and
negatives passed, so the cheap filters come first. The wording that sends a message
*away* from a check (questions, weather words, …) is the rule's ``negative`` in the
rules file, not code here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import lru_cache

MAX_CHARS = 400  # longer messages are not read by a check (a trip request is short)


def trip_request(text: str) -> str | None:
    return _trip_request(text, date.today())


@lru_cache(maxsize=512)  # the gate and the router's L1 may ask about one message twice
def _trip_request(text: str, today: date) -> str | None:
    """A trip request without a planning verb ("I'd like a long weekend in Kyoto", "五一去成都玩"):
    the parser finds a destination and something only a trip has (dates, a length, a party,
    a budget)."""
    if len(text) > MAX_CHARS:
        return None
    from navigo_core.understand import parse_request

    req = parse_request(text, today=today)
    place = req.destination_text and (req.destination is not None or req.ambiguity("destination") is not None)
    trip = (req.start_date or req.days or req.ambiguity("dates") or req.travellers or req.budget or req.vague)
    return f"destination {req.destination_text!r} with trip details" if place and trip else None


def names_place(text: str) -> str | None:
    return _names_place(text, date.today())


@lru_cache(maxsize=512)
def _names_place(text: str, today: date) -> str | None:
    """The parser finds a place the message is about ("best ramen in Osaka", "成都有什么好吃的"): a destination, or an
    origin; resolved or ambiguous, never a guess."""
    if len(text) > MAX_CHARS:
        return None
    from navigo_core.understand import parse_request

    req = parse_request(text, today=today)
    for field, found in (("destination", req.destination), ("origin", req.origin)):
        written = getattr(req, f"{field}_text")
        if written and (found is not None or req.ambiguity(field) is not None):
            return f"{field} {written!r}"
    return None


CHECKS: dict[str, Callable[[str], str | None]] = {"trip_request": trip_request, "names_place": names_place}

__all__ = ["CHECKS", "names_place", "trip_request"]
