"""The offline flight estimator: no network, always available, always labelled an estimate.

It answers "roughly how long, roughly how much" for a one-way flight between
two airports, from the great-circle distance alone. Every offer it returns has
``estimated=True``, ``carrier="estimate"``, ``provider="offline"`` and no flight
number: it is not a real flight and must never be shown as bookable.

Airports
    ``airportsdata`` (IATA codes, coordinates, IANA time zones; MIT licence).
    :func:`airports_for_city` maps a city (name or :class:`Place`) to its main
    airport(s): a hand-written table for common cities first (Shanghai → PVG,
    SHA; Beijing → PEK, PKX; Tokyo → HND, NRT ...), then airports whose
    ``city`` field is the name, then the nearest airport to the place.

No flight needed
    Airports closer than :data:`MIN_FLIGHT_KM` (300 km great circle) → ``[]``;
    callers show ``flights.no_flight_needed`` ("train or car").

Duration (minutes, rounded to 5)
    ``OVERHEAD_MIN`` (30: taxi, climb, approach) + distance ÷ ``CRUISE_KMH``
    (800 km/h block speed). Beyond :data:`NONSTOP_MAX_KM` (12,000 km) the
    estimate assumes one stop and adds ``CONNECTION_MIN`` (120). Examples:
    PVG→PEK (≈1,080 km) ≈ 1 h 55; PVG→NRT (≈1,770 km) ≈ 2 h 45.

Fare (USD, one-way, per adult, economy)
    ``BASE_FARE_USD`` (50: taxes and fees) + distance priced in marginal bands
    (like tax brackets, so the fare never drops as distance grows):

    ==================  ==========
    band (km)           USD per km
    ==================  ==========
    0 – 1,000           0.11
    1,000 – 3,000       0.08
    3,000 – 8,000       0.06
    beyond 8,000        0.05
    ==================  ==========

    × cabin multiplier (economy 1.0, premium economy 1.6, business 3.5,
    first 5.5) × departure-time factor (07:30 0.9, 12:15 1.0, 18:40 1.1:
    early flights are usually cheaper). A child (under 12) pays 75 % of an
    adult fare. The offer's ``price`` is the total for all passengers, rounded
    to whole USD. Examples (economy, one adult, 12:15): PVG→PEK ≈ 166 USD,
    PVG→NRT ≈ 222 USD. These are NaviGo's own rough figures from typical
    published one-way economy fares, not quotes.

Departures
    07:30, 12:15 and 18:40 local time at the origin airport (its ``tz``);
    arrival in the destination airport's local time.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from navigo_core.errors import InputError
from navigo_core.geo import haversine_m
from navigo_core.providers.flights.base import CABINS, FlightOffer
from navigo_core.providers.places.base import Place

if TYPE_CHECKING:  # pragma: no cover - airportsdata is loaded on first use
    from airportsdata import Airport

MIN_FLIGHT_KM = 300.0
OVERHEAD_MIN = 30.0
CRUISE_KMH = 800.0
NONSTOP_MAX_KM = 12_000.0
CONNECTION_MIN = 120.0
BASE_FARE_USD = 50.0
#: (band upper bound in km, USD per km within the band); see the module docstring.
FARE_BANDS: tuple[tuple[float, float], ...] = ((1000.0, 0.11), (3000.0, 0.08), (8000.0, 0.06), (float("inf"), 0.05))
CABIN_MULTIPLIER: dict[str, float] = {"economy": 1.0, "premium_economy": 1.6, "business": 3.5, "first": 5.5}
CHILD_FACTOR = 0.75
#: (local departure time, fare factor)
DEPARTURES: tuple[tuple[time, float], ...] = ((time(7, 30), 0.9), (time(12, 15), 1.0), (time(18, 40), 1.1))

#: Main airports of common cities, busiest first (names as typed: English, lower case, or Chinese).
CITY_AIRPORTS: dict[str, tuple[str, ...]] = {
    "shanghai": ("PVG", "SHA"), "上海": ("PVG", "SHA"),
    "beijing": ("PEK", "PKX"), "北京": ("PEK", "PKX"), "peking": ("PEK", "PKX"),
    "tokyo": ("HND", "NRT"), "东京": ("HND", "NRT"), "東京": ("HND", "NRT"),
    "hangzhou": ("HGH",), "杭州": ("HGH",),
    "guangzhou": ("CAN",), "广州": ("CAN",), "canton": ("CAN",),
    "shenzhen": ("SZX",), "深圳": ("SZX",),
    "chengdu": ("TFU", "CTU"), "成都": ("TFU", "CTU"),
    "chongqing": ("CKG",), "重庆": ("CKG",),
    "xi'an": ("XIY",), "xian": ("XIY",), "西安": ("XIY",),
    "nanjing": ("NKG",), "南京": ("NKG",),
    "suzhou": ("SHA", "PVG"), "苏州": ("SHA", "PVG"),
    "wuhan": ("WUH",), "武汉": ("WUH",),
    "kunming": ("KMG",), "昆明": ("KMG",),
    "xiamen": ("XMN",), "厦门": ("XMN",),
    "qingdao": ("TAO",), "青岛": ("TAO",),
    "sanya": ("SYX",), "三亚": ("SYX",),
    "haikou": ("HAK",), "海口": ("HAK",),
    "guilin": ("KWL",), "桂林": ("KWL",),
    "lhasa": ("LXA",), "拉萨": ("LXA",),
    "harbin": ("HRB",), "哈尔滨": ("HRB",),
    "shenyang": ("SHE",), "沈阳": ("SHE",),
    "dalian": ("DLC",), "大连": ("DLC",),
    "tianjin": ("TSN",), "天津": ("TSN",),
    "changsha": ("CSX",), "长沙": ("CSX",),
    "zhengzhou": ("CGO",), "郑州": ("CGO",),
    "urumqi": ("URC",), "乌鲁木齐": ("URC",),
    "hong kong": ("HKG",), "香港": ("HKG",),
    "macau": ("MFM",), "macao": ("MFM",), "澳门": ("MFM",),
    "taipei": ("TPE", "TSA"), "台北": ("TPE", "TSA"),
    "osaka": ("KIX", "ITM"), "大阪": ("KIX", "ITM"), "kyoto": ("KIX", "ITM"), "京都": ("KIX", "ITM"),
    "nagoya": ("NGO",), "sapporo": ("CTS",), "fukuoka": ("FUK",), "okinawa": ("OKA",), "naha": ("OKA",),
    "seoul": ("ICN", "GMP"), "首尔": ("ICN", "GMP"), "busan": ("PUS",),
    "bangkok": ("BKK", "DMK"), "曼谷": ("BKK", "DMK"), "phuket": ("HKT",), "chiang mai": ("CNX",),
    "singapore": ("SIN",), "新加坡": ("SIN",),
    "kuala lumpur": ("KUL",), "hanoi": ("HAN",), "ho chi minh city": ("SGN",), "saigon": ("SGN",),
    "manila": ("MNL",), "jakarta": ("CGK",), "bali": ("DPS",), "denpasar": ("DPS",),
    "delhi": ("DEL",), "new delhi": ("DEL",), "mumbai": ("BOM",), "dubai": ("DXB",), "doha": ("DOH",),
    "istanbul": ("IST", "SAW"), "moscow": ("SVO", "DME", "VKO"),
    "london": ("LHR", "LGW", "STN", "LTN", "LCY"), "伦敦": ("LHR", "LGW"),
    "paris": ("CDG", "ORY"), "巴黎": ("CDG", "ORY"),
    "rome": ("FCO", "CIA"), "milan": ("MXP", "LIN"), "berlin": ("BER",), "frankfurt": ("FRA",),
    "munich": ("MUC",), "madrid": ("MAD",), "barcelona": ("BCN",), "amsterdam": ("AMS",),
    "zurich": ("ZRH",), "lyon": ("LYS",), "nice": ("NCE",), "geneva": ("GVA",), "vienna": ("VIE",), "prague": ("PRG",), "lisbon": ("LIS",), "athens": ("ATH",),
    "new york": ("JFK", "EWR", "LGA"), "纽约": ("JFK", "EWR", "LGA"),
    "los angeles": ("LAX",), "洛杉矶": ("LAX",), "san francisco": ("SFO",), "chicago": ("ORD", "MDW"),
    "washington": ("IAD", "DCA"), "boston": ("BOS",), "seattle": ("SEA",), "las vegas": ("LAS",),
    "toronto": ("YYZ",), "vancouver": ("YVR",), "mexico city": ("MEX",),
    "sydney": ("SYD",), "悉尼": ("SYD",), "melbourne": ("MEL",), "auckland": ("AKL",),
    "cairo": ("CAI",), "johannesburg": ("JNB",), "sao paulo": ("GRU",), "são paulo": ("GRU",),
}

_IATA = re.compile(r"[A-Z]{3}")
_NOT_AIRPORT = re.compile(r"heliport|seaplane|air ?base|military|helipad|\bAFB\b|naval|\bRAF\b|\bArmy\b|\bNAS\b|\(BA ",
                          re.IGNORECASE)
NEAREST_MAX_KM = 150.0  # airports_for_city: the nearest airport must be this close to the place


@lru_cache(maxsize=1)
def airports() -> dict[str, Airport]:
    """``airportsdata``'s airports keyed by IATA code (loaded once, ~0.1 s)."""
    import airportsdata

    return airportsdata.load("IATA")


def airport(code: str) -> Airport | None:
    """The airport with IATA ``code`` (case-insensitive), or None."""
    return airports().get(code.strip().upper())


def _key(text: str) -> str:
    return " ".join(text.strip().casefold().replace("市", "").split())


def _is_international(ap: Airport) -> bool:
    return "international" in ap["name"].casefold()


def nearest_airports(lat: float, lon: float, *, max_km: float = NEAREST_MAX_KM, limit: int = 1) -> list[str]:
    """IATA codes of the airports nearest to ``(lat, lon)`` within ``max_km``, international ones first."""
    found = []
    for code, ap in airports().items():
        if _NOT_AIRPORT.search(ap["name"]):
            continue
        d = haversine_m(lat, lon, float(ap["lat"]), float(ap["lon"])) / 1000.0
        if d <= max_km:
            found.append((not _is_international(ap), d, code))
    return [code for _, _, code in sorted(found)[:limit]]


def airports_for_city(place_or_name: Place | str) -> list[str]:
    """The main airport(s) serving a city, busiest first; ``[]`` when none is known.

    * an IATA airport code ("PVG") → that code;
    * a city in :data:`CITY_AIRPORTS` (English or Chinese name) → its airports;
    * a :class:`Place` from an airport (``source="iata"``) → its code;
    * a name matching airportsdata's ``city`` field → those airports, international ones first;
    * another name → looked up in the offline gazetteer, then as a place:
    * a :class:`Place` otherwise → the nearest airport within :data:`NEAREST_MAX_KM`,
      preferring international airports.
    """
    if isinstance(place_or_name, Place):
        p = place_or_name
        if p.source == "iata" and p.ref and airport(p.ref):
            return [p.ref.upper()]
        for name in (p.name, p.name_zh):
            if name and _key(name) in CITY_AIRPORTS:
                return list(CITY_AIRPORTS[_key(name)])
        by_city = [c for c in _by_city_field(p.name, p.country) if _km_to(c, p.lat, p.lon) <= NEAREST_MAX_KM]
        return by_city or nearest_airports(p.lat, p.lon, limit=1)
    text = place_or_name.strip()
    if _IATA.fullmatch(text) and airport(text):
        return [text]
    name = text.split(",")[0]
    if _key(name) in CITY_AIRPORTS:
        return list(CITY_AIRPORTS[_key(name)])
    if _key(text) in CITY_AIRPORTS:
        return list(CITY_AIRPORTS[_key(text)])
    by_city = _by_city_field(name)
    if by_city:
        return by_city
    from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider  # offline; loaded only here

    found = GazetteerPlaceProvider().search(text, limit=1)
    return nearest_airports(found[0].lat, found[0].lon, limit=1) if found else []


def _km_to(code: str, lat: float, lon: float) -> float:
    ap = airports()[code]
    return haversine_m(lat, lon, float(ap["lat"]), float(ap["lon"])) / 1000.0


def _by_city_field(name: str, country: str = "") -> list[str]:
    key = _key(name)
    if not key:
        return []
    hits = [(not _is_international(ap), code) for code, ap in airports().items()
            if _key(ap.get("city") or "") == key and (not country or ap["country"] == country)
            and not _NOT_AIRPORT.search(ap["name"])]
    hits.sort()
    international = [c for intl_missing, c in hits if not intl_missing]
    return (international or [c for _, c in hits])[:3]


def estimate_duration_min(distance_km: float) -> int:
    """Block time in minutes for a flight of ``distance_km`` great-circle km (see the module docstring)."""
    minutes = OVERHEAD_MIN + distance_km / CRUISE_KMH * 60.0
    if distance_km > NONSTOP_MAX_KM:
        minutes += CONNECTION_MIN
    return int(5 * round(minutes / 5))


def estimate_fare_usd(distance_km: float, cabin: str = "economy") -> float:
    """One adult's one-way fare in USD for ``distance_km`` (see the module docstring), before the time factor."""
    fare, lower = BASE_FARE_USD, 0.0
    for upper, rate in FARE_BANDS:
        if distance_km <= lower:
            break
        fare += (min(distance_km, upper) - lower) * rate
        lower = upper
    return fare * CABIN_MULTIPLIER.get(cabin, 1.0)


def _resolve_code(text: str) -> str:
    """An IATA code for ``text`` (a code, or a city name via :func:`airports_for_city`)."""
    code = text.strip().upper()
    if airport(code):
        return code
    codes = airports_for_city(text)
    if codes:
        return codes[0]
    raise InputError("flights.unknown_airport", code=text.strip())


class OfflineFlightProvider:
    """Great-circle duration and fare estimates at three fixed departure times (see the module docstring)."""

    name = "offline"
    estimated = True

    def search(self, origin: str, destination: str, depart_date: date, *, adults: int, children: int = 0,
               cabin: str = "economy", max_offers: int = 10) -> list[FlightOffer]:
        if adults < 1 or children < 0:
            raise InputError("flights.bad_passengers", adults=adults, children=children)
        if cabin not in CABINS:
            raise InputError("flights.bad_cabin", cabin=cabin, cabins=", ".join(CABINS))
        o_code, d_code = _resolve_code(origin), _resolve_code(destination)
        o, d = airports()[o_code], airports()[d_code]
        km = haversine_m(float(o["lat"]), float(o["lon"]), float(d["lat"]), float(d["lon"])) / 1000.0
        if km < MIN_FLIGHT_KM:
            return []
        minutes = estimate_duration_min(km)
        fare = estimate_fare_usd(km, cabin)
        o_tz, d_tz = ZoneInfo(o["tz"]), ZoneInfo(d["tz"])
        pax = adults + CHILD_FACTOR * children
        offers = []
        for dep_time, factor in DEPARTURES[: max(0, max_offers)]:
            dep = datetime.combine(depart_date, dep_time, tzinfo=o_tz)
            arr = (dep.astimezone(timezone.utc) + timedelta(minutes=minutes)).astimezone(d_tz)  # DST-safe
            offers.append(FlightOffer(
                id=f"est-{o_code}-{d_code}-{depart_date:%Y%m%d}-{dep_time:%H%M}",
                origin=o_code, destination=d_code, depart_at=dep, arrive_at=arr, duration_min=minutes,
                carrier="estimate", flight_number="", stops=1 if km > NONSTOP_MAX_KM else 0, cabin=cabin,
                price=float(round(fare * factor * pax)), currency="USD", price_is_total_for=adults + children,
                estimated=True, provider=self.name,
            ))
        return offers
