"""A fake Duffel API: ``POST /air/offer_requests`` in Duffel's JSON shape.

* Checks ``Authorization: Bearer {token}`` (401 ``authentication_error`` otherwise)
  and ``Duffel-Version: v2`` (400 ``unsupported_version`` otherwise), as Duffel does.
* Validates the body (``data.slices[]``, ``data.passengers[]``): 422 ``validation_error``.
* Offers: ``offers`` (a list of Duffel-shaped offers, e.g. built with
  :func:`duffel_offer`) when set, else ``generated`` offers per request: one per
  departure time in :data:`GEN_TIMES`, direct, carrier ``ZZ``, times from the
  great-circle distance at :data:`GEN_SPEED_KMH` (local times without offset, like
  Duffel), ``total_amount`` = (:data:`GEN_BASE` + km × :data:`GEN_PER_KM` + 20 × i) ×
  passengers, in ``currency``.
* ``error``: ``(status, type, title, message)`` → answer every request with that
  Duffel error.
* Fault injection bodies use Duffel's ``errors[]`` shape.

Run it: ``python -m tests.fakes.duffel --port 5004`` (then
DUFFEL_BASE_URL=http://127.0.0.1:5004, DUFFEL_ACCESS_TOKEN=duffel_test_fake).
"""

from __future__ import annotations

import itertools
import re
from datetime import date, datetime, timedelta
from typing import Any

from navigo_core.geo import haversine_m
from tests.fakes.server import FakeServer, Request, Response, serve_main

FAKE_TOKEN = "duffel_test_fake_token_123"
GEN_TIMES = ("08:00", "13:00", "19:00")
GEN_SPEED_KMH = 750.0
GEN_OVERHEAD_MIN = 30
GEN_BASE = 80.0
GEN_PER_KM = 0.1


def iso_duration(minutes: int) -> str:
    """``PT2H5M`` for 125 minutes."""
    h, m = divmod(int(minutes), 60)
    return "PT" + (f"{h}H" if h else "") + (f"{m}M" if m or not h else "")


def _place(code: str, tz: str | None) -> dict[str, Any]:
    return {"type": "airport", "iata_code": code, "name": f"{code} Airport", "time_zone": tz}


def duffel_segment(origin: str, destination: str, departing_at: str, arriving_at: str, *, carrier: str = "ZZ",
                   flight_number: str = "100", duration: str | None = "PT2H", cabin: str = "economy",
                   origin_tz: str | None = None, destination_tz: str | None = None) -> dict[str, Any]:
    """One Duffel segment (local times without offset, as Duffel sends them)."""
    return {
        "id": f"seg_{origin}{destination}{flight_number}",
        "origin": _place(origin, origin_tz), "destination": _place(destination, destination_tz),
        "departing_at": departing_at, "arriving_at": arriving_at, "duration": duration,
        "marketing_carrier": {"iata_code": carrier, "name": f"{carrier} Airways"},
        "marketing_carrier_flight_number": flight_number,
        "operating_carrier": {"iata_code": carrier, "name": f"{carrier} Airways"},
        "passengers": [{"passenger_id": "pas_0", "cabin_class": cabin, "cabin_class_marketing_name": cabin.title()}],
    }


def duffel_offer(offer_id: str, segments: list[dict[str, Any]], *, total_amount: str = "100.00",
                 currency: str = "USD", duration: str | None = None) -> dict[str, Any]:
    """One Duffel offer with a single slice made of ``segments``."""
    return {
        "id": offer_id, "total_amount": total_amount, "total_currency": currency,
        "base_amount": total_amount, "tax_amount": "0.00", "tax_currency": currency, "live_mode": False,
        "owner": segments[0]["marketing_carrier"],
        "slices": [{
            "id": f"sli_{offer_id}", "origin": segments[0]["origin"], "destination": segments[-1]["destination"],
            "duration": duration, "segments": segments,
        }],
        "expires_at": "2099-01-01T00:00:00Z",
    }


def _error(status: int, type_: str, title: str, message: str, code: str = "") -> Response:
    return Response(status, {"errors": [{"type": type_, "title": title, "message": message, "code": code or type_,
                                         "documentation_url": "https://duffel.com/docs/api/overview/errors"}],
                             "meta": {"status": status, "request_id": "req_fake"}})


class FakeDuffel(FakeServer):
    """Answers ``POST /air/offer_requests`` (see the module docstring)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, token: str = FAKE_TOKEN) -> None:
        super().__init__(host, port)
        self.token = token
        self.offers: list[dict[str, Any]] | None = None
        self.currency = "USD"
        self.error: tuple[int, str, str, str] | None = None
        self._ids = itertools.count(1)
        self.route("POST", r"/air/offer_requests", self._offer_request)

    def fault_body(self, status: int) -> Any:
        return {"errors": [{"type": "api_error", "title": "Injected fault", "code": "injected",
                            "message": f"injected fault: HTTP {status}"}], "meta": {"status": status}}

    def _offer_request(self, req: Request, m: re.Match[str]) -> Any:
        if req.headers.get("authorization") != f"Bearer {self.token}":
            return _error(401, "authentication_error", "Invalid access token",
                          "The access token used is not recognized by our system", "unauthorized")
        if req.headers.get("duffel-version") != "v2":
            return _error(400, "invalid_request_error", "Unsupported version",
                          f"Duffel-Version {req.headers.get('duffel-version')!r} is not supported", "unsupported_version")
        if self.error:
            return _error(*self.error)
        try:
            data = req.json()["data"]
            sl = data["slices"][0]
            origin, destination = sl["origin"], sl["destination"]
            day = date.fromisoformat(sl["departure_date"])
            pax = data["passengers"]
            assert isinstance(pax, list) and pax
        except (KeyError, IndexError, TypeError, ValueError, AssertionError) as exc:
            return _error(422, "validation_error", "Invalid request", f"malformed offer request: {exc!r}")
        cabin = data.get("cabin_class") or "economy"
        if self.offers is not None:
            offers = self.offers
        else:
            offers = self.generate(origin, destination, day, len(pax), cabin)
        if req.params.get("return_offers") != "true":
            offers = []
        return Response(201, {"data": {
            "id": f"orq_{next(self._ids)}", "live_mode": False, "cabin_class": cabin,
            "slices": data["slices"],
            "passengers": [{"id": f"pas_{i}", **p} for i, p in enumerate(pax)],
            "offers": offers, "created_at": "2025-01-01T00:00:00Z",
        }})

    def generate(self, origin: str, destination: str, day: date, pax: int, cabin: str) -> list[dict[str, Any]]:
        """The generated offers (see the module docstring); unknown airports give none."""
        import airportsdata

        aps = airportsdata.load("IATA")
        o, d = aps.get(origin), aps.get(destination)
        if o is None or d is None:
            return []
        km = haversine_m(o["lat"], o["lon"], d["lat"], d["lon"]) / 1000.0
        minutes = int(GEN_OVERHEAD_MIN + km / GEN_SPEED_KMH * 60)
        from zoneinfo import ZoneInfo

        out = []
        for i, hhmm in enumerate(GEN_TIMES):
            dep = datetime.combine(day, datetime.strptime(hhmm, "%H:%M").time(), tzinfo=ZoneInfo(o["tz"]))
            arr = (dep + timedelta(minutes=minutes)).astimezone(ZoneInfo(d["tz"]))
            seg = duffel_segment(origin, destination, dep.replace(tzinfo=None).isoformat(),
                                 arr.replace(tzinfo=None).isoformat(), carrier="ZZ", flight_number=str(100 + i),
                                 duration=iso_duration(minutes), cabin=cabin, origin_tz=o["tz"], destination_tz=d["tz"])
            amount = (GEN_BASE + km * GEN_PER_KM + 20 * i) * pax
            out.append(duffel_offer(f"off_gen_{i}", [seg], total_amount=f"{amount:.2f}", currency=self.currency,
                                    duration=iso_duration(minutes)))
        return out


if __name__ == "__main__":
    serve_main(lambda host, port: FakeDuffel(host, port), f"Fake Duffel (token {FAKE_TOKEN})", 5004)
