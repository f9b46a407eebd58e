"""Itinerary agent: one day per date of the trip, built offline from the activity catalogue.

Rules: the arrival day is light (check-in + at most ``arrival_day_activities``); the
departure day holds only check-out and the transfer; HIGH-risk weather days get indoor
activities only; interests are taken in turn, so they spread across days; no activity
appears twice. A city without place data in the catalogue gets kinds of activity ("a museum of
your choice"), and the first day says so — unless an online POI provider is on (POI_ONLINE=true,
``deps.pois``): then its named places near the city (museums, sights, parks, viewpoints) are used
first, as real places with coordinates and their source ("OpenStreetMap"). Every name is scanned
for prompt injection and unsafe output first; a flagged one is dropped, never shown. A provider
failure falls back to the kinds of activity with a note (never a traceback, never an invented
place). The offline default sends no request. Owns: ``itinerary``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from navigo_core.errors import NavigoError, ProviderHTTPError, ProviderTimeout, describe_failure
from navigo_core.planner.agents._common import city_name, data, entry, known_interest, lang_of, required, t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import Activity, ItineraryDay, PlannerState
from navigo_core.security import detect_unsafe_output
from navigo_core.security.provider_text import scan_provider_text

NAME = "itinerary"
LATE_ARRIVAL_HOUR = 17

#: kind of an online place → (the interests it serves besides "general", whether it is indoors)
POI_KINDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "museum": (("culture", "family"), True),
    "gallery": (("art", "culture"), True),
    "historic": (("culture",), False),
    "attraction": ((), False),
    "viewpoint": (("nature", "hiking"), False),
    "park": (("nature", "family"), False),
}


def ready(state: PlannerState) -> bool:
    return (state.user_request is not None and state.preferences is not None
            and state.destination_candidates is not None and state.weather is not None
            and state.flight_options is not None and state.itinerary is None and not state.blocked)


class _Picker:
    """Hands out catalogue activities without repeats, interests in turn."""

    def __init__(self, interests: list[str], city_key: str, city: str, lang: str,
                 online: dict[str, list[dict[str, Any]]] | None = None) -> None:
        cat = data("activities")
        self.lang, self.city = lang, city
        self.order = [k for k in interests if known_interest(k)] or ["general"]
        if online and "general" not in self.order:  # real sights take a turn beside the interests
            self.order.append("general")
        self.pools: dict[str, list[dict[str, Any]]] = {}
        city_rows = (cat.get("cities") or {}).get(city_key, {})
        for key in [*self.order, "general"]:
            self.pools[key] = [*(online or {}).get(key, []), *city_rows.get(key, []), *cat["activities"].get(key, [])]
        self.indoor_alt = list(cat["indoor_alternatives"])
        self.used: set[str] = set()
        self.turn = 0

    def _make(self, row: dict[str, Any], interest: str) -> Activity:
        self.used.add(row["id"])
        title = str(row.get(self.lang) or row["en"])
        if not row.get("source"):  # catalogue text; a provider's name is used as given
            title = title.replace("{city}", self.city)
        return Activity(id=row["id"], title=title, interest=interest, indoor=bool(row.get("indoor")),
                        lat=row.get("lat"), lon=row.get("lon"), source=str(row.get("source") or ""))

    def pick(self, *, indoor_only: bool) -> Activity | None:
        n = len(self.order)
        for step in range(n):
            key = self.order[(self.turn + step) % n]
            row = next((r for r in self.pools[key] if r["id"] not in self.used
                        and (r.get("indoor") or not indoor_only)), None)
            if row is not None:
                self.turn = (self.turn + step + 1) % n
                return self._make(row, key)
        self.turn = (self.turn + 1) % n
        pools = [self.indoor_alt, self.pools["general"]] if indoor_only else [self.pools["general"], self.indoor_alt]
        for pool in pools:
            row = next((r for r in pool if r["id"] not in self.used and (r.get("indoor") or not indoor_only)), None)
            if row is not None:
                return self._make(row, "general")
        return None


def _flight_label(f: Any) -> str:
    if f.flight_number:
        return f"{f.carrier}{f.flight_number}" if not f.flight_number.startswith(f.carrier) else f.flight_number
    return f"{f.origin}→{f.destination}"


@dataclass
class _Online:
    """What the online POI provider gave for a city: picker rows per interest, the log, a fallback note."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    source: str = ""
    evidence: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    note: str = ""


def _destination_point(state: PlannerState) -> tuple[float, float] | None:
    cands = state.destination_candidates or []
    for ref in [*cands[:1], getattr(state.user_request, "destination", None)]:
        lat, lon = getattr(ref, "lat", None), getattr(ref, "lon", None)
        if lat is not None and lon is not None:
            return float(lat), float(lon)
    return None


def _failure_text(exc: NavigoError, lang: str) -> str:
    """Why the online search failed, in our words only: a server's own text (an error body, a remark)
    is untrusted provider text and never reaches the plan."""
    if isinstance(exc, ProviderTimeout) or exc.code == "provider.unreachable":
        return exc.message(lang)  # our template, the provider's display name, seconds, the configured URL
    if isinstance(exc, ProviderHTTPError):
        return t("pois.failed_http", lang, status=exc.params.get("status", "?"))
    return t("pois.failed_reply", lang)


def online_places(state: PlannerState, deps: PlannerDeps, city: str, lang: str) -> _Online:
    """Named places near the destination from ``deps.pois`` (nothing, and no request, when it is offline).

    Names flagged by the injection or unsafe-output rules are dropped (their flags logged); a provider
    failure gives no rows, the ``PLACES_UNAVAILABLE`` flag and a note for the first day.
    """
    provider = getattr(deps, "pois", None)
    if provider is None or not getattr(provider, "online", False):
        return _Online()
    source = str(getattr(provider, "source", "") or getattr(provider, "name", "online"))
    out = _Online(source=source)
    point = _destination_point(state)
    if point is None:
        out.evidence.append("online places: no coordinates for the destination; none asked for")
        return out
    try:
        pois = provider.nearby(point[0], point[1], lang=lang)
    except NavigoError as exc:
        out.flags.append("PLACES_UNAVAILABLE")
        out.evidence.append(f"online places ({provider.name}) failed: {describe_failure(exc)}")
        out.note = t("pois.note_failed", lang, source=source, detail=_failure_text(exc, lang))
        return out
    except Exception as exc:  # a broken provider must cost the places, never the itinerary
        out.flags.append("PLACES_UNAVAILABLE")
        out.evidence.append(f"online places ({provider.name}) failed: {type(exc).__name__}")
        out.note = t("pois.note_failed", lang, source=source, detail=t("pois.failed_reply", lang))
        return out
    dropped = 0
    for poi in pois:
        found = [*scan_provider_text([poi.name]), *detect_unsafe_output(poi.name)]
        if found:  # provider text that tries to instruct, or unsafe: never shown, never passed on
            dropped += 1
            out.flags.extend(f for f in found if f not in out.flags)
            continue
        interests, indoor = POI_KINDS.get(poi.kind, ((), False))
        row = {"id": poi.id, "en": poi.name, "zh": poi.name, "indoor": indoor, "lat": poi.lat, "lon": poi.lon,
               "source": poi.source or source}
        for key in (*interests, "general"):
            out.rows.setdefault(key, []).append(row)
    kept = len(pois) - dropped
    out.evidence.append(f"online places ({provider.name}, {source}): {len(pois)} found, {kept} kept, "
                        f"{dropped} dropped (provider text flagged)")
    if not kept:
        out.note = t("pois.note_none", lang, source=source, city=city)
    return out


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = required(state.user_request, "the user request")
    prefs = required(state.preferences, "the preferences")
    lang = lang_of(state)
    start, end = required(req.start_date, "the start date"), required(req.end_date, "the end date")
    n = (end - start).days + 1
    city = city_name(state, lang)
    cands = state.destination_candidates or []
    city_key = (cands[0].name if cands else getattr(req.destination, "name", "")).casefold()
    has_places = city_key in (data("activities").get("cities") or {})
    online = _Online() if has_places else online_places(state, deps, city, lang)
    picker = _Picker(prefs.prioritized_interests, city_key, city, lang, online.rows)
    plan_cfg = data("planning")
    per_day = int(plan_cfg["activities_per_day"].get(prefs.preferred_pace, 2))
    risk = {w.date: w.risk for w in state.weather or [] if w.available}
    out_flight = state.flight_by_id(state.recommended_flight_id)
    back_flight = state.flight_by_id(state.recommended_return_flight_id)
    days: list[ItineraryDay] = []
    high_days = 0
    for i in range(n):
        d = start + timedelta(days=i)
        r = risk.get(d)
        indoor_only = r == "HIGH"
        high_days += indoor_only
        day_type = "single" if n == 1 else "arrival" if i == 0 else "departure" if i == n - 1 else "full"
        acts: list[Activity] = []
        notes: list[str] = []
        if day_type in ("arrival", "single"):
            if out_flight is not None:
                title = t("planner.itin.arrive_flight", lang, city=city, time=out_flight.arrive_at.strftime("%H:%M"),
                          flight=_flight_label(out_flight))
            else:
                title = t("planner.itin.arrive", lang, city=city)
            acts.append(Activity(id=f"arrival-{d.isoformat()}", title=title, kind="arrival",
                                 flight_id=out_flight.id if out_flight else None))
            late = out_flight is not None and out_flight.arrive_at.hour >= LATE_ARRIVAL_HOUR
            k = 0 if late else int(plan_cfg["arrival_day_activities"])
            for _ in range(k):
                a = picker.pick(indoor_only=indoor_only)
                if a:
                    acts.append(a)
            notes.append(t("planner.itin.note_arrival", lang))
        if day_type == "full":
            for _ in range(per_day):
                a = picker.pick(indoor_only=indoor_only)
                if a:
                    acts.append(a)
        if day_type in ("departure", "single"):
            if back_flight is not None:
                title = t("planner.itin.depart_flight", lang, time=back_flight.depart_at.strftime("%H:%M"),
                          flight=_flight_label(back_flight))
            else:
                title = t("planner.itin.depart", lang)
            acts.append(Activity(id=f"departure-{d.isoformat()}", title=title, kind="departure",
                                 flight_id=back_flight.id if back_flight else None))
            notes.append(t("planner.itin.note_departure", lang))
        if r == "HIGH":
            notes.append(t("planner.itin.note_high", lang))
        elif r == "MEDIUM":
            notes.append(t("planner.itin.note_medium", lang))
        days.append(ItineraryDay(day=i + 1, date=d, city=city, day_type=day_type, weather_risk=r,  # type: ignore[arg-type]
                                 activities=acts, notes=notes))
    if not risk:
        days[0].notes.append(t("planner.itin.note_no_forecast", lang))
    if not has_places:
        if any(a.source for d in days for a in d.activities):  # real places from the online provider
            days[0].notes.append(t("pois.note_online", lang, city=city, source=online.source))
        else:  # generic kinds of activity, said plainly (and why, when the online search failed)
            days[0].notes.append(t("planner.itin.note_no_places", lang, city=city))
            if online.note:
                days[0].notes.append(online.note)
    update: dict[str, Any] = {"itinerary": days}
    n_acts = sum(1 for d in days for a in d.activities if a.kind == "activity")
    update.update(entry(NAME, deps, input_summary=f"{city}, {start}–{end}, interests {prefs.prioritized_interests}",
                        evidence=[f"outbound offers: {len(state.flight_options or [])}, return offers: "
                                  f"{len(state.return_flight_options)}", f"HIGH-risk days: {high_days}",
                                  f"pace: {prefs.preferred_pace}", *online.evidence],
                        risk_flags=online.flags,
                        output_summary=f"{len(days)} day(s), {n_acts} activities"))
    return update
