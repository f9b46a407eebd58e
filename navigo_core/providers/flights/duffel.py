"""Real flight offers from Duffel (``DUFFEL_ACCESS_TOKEN``).

One request per search::

    POST {base}/air/offer_requests?return_offers=true
    Authorization: Bearer <token>
    Duffel-Version: v2
    {"data": {"slices": [{"origin": "PVG", "destination": "NRT", "departure_date": "2025-05-01"}],
              "passengers": [{"type": "adult"}, ..., {"age": 8}, ...],
              "cabin_class": "economy"}}

Each of ``data.offers[]`` becomes a :class:`FlightOffer`: ``total_amount`` /
``total_currency`` (the total for all passengers), and from ``slices[0]``:
the first segment's ``departing_at`` and marketing carrier and flight number,
the last segment's ``arriving_at``, ``len(segments) - 1`` stops, and the
slice's ISO-8601 ``duration`` ("PT2H5M"; when absent, arrival − departure,
layovers included). Duffel gives local times without an
offset; the segment's ``origin.time_zone`` / ``destination.time_zone`` (else
the airport's zone from ``airportsdata``) makes them timezone-aware.

Children are sent by age (:data:`CHILD_AGE`, 8), as Duffel prefers.

Failures (display name "Duffel"): timeouts → ``ProviderTimeout``; HTTP errors →
``ProviderHTTPError`` with Duffel's ``errors[0].title`` / ``message``; a reply
without ``data.offers`` → ``provider.bad_reply``. The token is never put in a
message (it is also scrubbed from any error text the server echoes).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx

from navigo_core.errors import InputError, ProviderHTTPError
from navigo_core.providers.flights.base import CABINS, FlightOffer
from navigo_core.providers.flights.offline import airport
from navigo_core.providers.http import bad_reply, error_detail, json_or_none, make_client, request_json

PROVIDER = "Duffel"
API_VERSION = "v2"
CHILD_AGE = 8
_ISO_DURATION = re.compile(r"P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?")


def parse_iso_duration_min(text: str | None) -> int | None:
    """Minutes in an ISO-8601 duration such as ``PT2H5M`` or ``P1DT2H``; None when absent or unreadable."""
    m = _ISO_DURATION.fullmatch(text or "")
    if not text or not m:
        return None
    days, hours, minutes, seconds = (float(m[k] or 0) for k in ("d", "h", "m", "s"))
    return int(round(days * 1440 + hours * 60 + minutes + seconds / 60))


def passengers(adults: int, children: int) -> list[dict[str, Any]]:
    """Duffel's passenger list: ``{"type": "adult"}`` per adult, ``{"age": 8}`` per child."""
    return [{"type": "adult"} for _ in range(adults)] + [{"age": CHILD_AGE} for _ in range(children)]


def _zone(place: Any, code: str) -> ZoneInfo | None:
    name = place.get("time_zone") if isinstance(place, dict) else None
    if not name:
        ap = airport(code) if code else None
        name = ap["tz"] if ap else None
    try:
        return ZoneInfo(name) if name else None
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _aware(text: str, place: Any, code: str) -> datetime:
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_zone(place, code) or timezone.utc)
    return dt


def _code(place: Any) -> str:
    return str(place.get("iata_code") or "") if isinstance(place, dict) else ""


class DuffelFlightProvider:
    """Flight offers from Duffel's offer requests API (see the module docstring)."""

    name = "duffel"
    estimated = False

    def __init__(self, access_token: str, *, base_url: str = "https://api.duffel.com", timeout_s: float = 10.0,
                 client: httpx.Client | None = None) -> None:
        self._token = access_token
        self.base_url = base_url.strip().rstrip("/")
        self.client = client or make_client(timeout_s=timeout_s)

    def __repr__(self) -> str:  # never show the token
        return f"DuffelFlightProvider(base_url={self.base_url!r})"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}", "Duffel-Version": API_VERSION,
                "Accept": "application/json", "Content-Type": "application/json"}

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def _on_error(self, response: httpx.Response) -> Exception | None:
        data = json_or_none(response)
        errors = data.get("errors") if isinstance(data, dict) else None
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            e = errors[0]
            parts = [str(p) for p in (e.get("title"), e.get("message")) if p]
            detail = ": ".join(dict.fromkeys(parts)) or str(e.get("code") or "no message")
        else:
            detail = error_detail(response)
        return ProviderHTTPError(provider=PROVIDER, status=response.status_code, detail=self._scrub(detail))

    def search(self, origin: str, destination: str, depart_date: date, *, adults: int, children: int = 0,
               cabin: str = "economy", max_offers: int = 10) -> list[FlightOffer]:
        if adults < 1 or children < 0:
            raise InputError("flights.bad_passengers", adults=adults, children=children)
        if cabin not in CABINS:
            raise InputError("flights.bad_cabin", cabin=cabin, cabins=", ".join(CABINS))
        body = {"data": {
            "slices": [{"origin": origin.strip().upper(), "destination": destination.strip().upper(),
                        "departure_date": depart_date.isoformat()}],
            "passengers": passengers(adults, children),
            "cabin_class": cabin,
        }}
        data = request_json(self.client, "POST", f"{self.base_url}/air/offer_requests", provider=PROVIDER,
                            params={"return_offers": "true"}, json_body=body, headers=self._headers(),
                            on_error_status=self._on_error)
        offers = data.get("data", {}).get("offers") if isinstance(data, dict) and isinstance(data.get("data"), dict) else None
        if not isinstance(offers, list):
            raise bad_reply(PROVIDER, "expected data.offers[] in the offer request reply")
        out = [self._offer(o, cabin, adults + children) for o in offers]
        out.sort(key=lambda f: (f.price, f.depart_at))
        return out[: max(0, max_offers)]

    def _offer(self, o: Any, cabin: str, pax: int) -> FlightOffer:
        try:
            sl = o["slices"][0]
            segs = sl["segments"]
            first, last = segs[0], segs[-1]
            o_code = _code(sl.get("origin")) or _code(first.get("origin"))
            d_code = _code(sl.get("destination")) or _code(last.get("destination"))
            dep = _aware(first["departing_at"], first.get("origin"), _code(first.get("origin")) or o_code)
            arr = _aware(last["arriving_at"], last.get("destination"), _code(last.get("destination")) or d_code)
            minutes = parse_iso_duration_min(sl.get("duration"))
            if minutes is None:  # door to door, layovers included
                minutes = int((arr - dep) / timedelta(minutes=1))
            carrier = (first.get("marketing_carrier") or {}).get("iata_code") or ""
            number = str(first.get("marketing_carrier_flight_number") or "")
            seg_pax = first.get("passengers") or []
            seg_cabin = seg_pax[0].get("cabin_class") if seg_pax and isinstance(seg_pax[0], dict) else None
            return FlightOffer(
                id=str(o["id"]), origin=o_code, destination=d_code, depart_at=dep, arrive_at=arr,
                duration_min=max(0, minutes), carrier=carrier, flight_number=f"{carrier}{number}" if number else "",
                stops=len(segs) - 1, cabin=seg_cabin or cabin, price=float(o["total_amount"]),
                currency=str(o.get("total_currency") or ""), price_is_total_for=pax, estimated=False,
                provider=self.name,
            )
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise bad_reply(PROVIDER, f"an offer without the expected fields ({type(exc).__name__}: {exc})") from exc
