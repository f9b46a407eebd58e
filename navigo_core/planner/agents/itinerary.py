"""Itinerary agent: one day per date of the trip, built offline from the activity catalogue.

Rules: the arrival day is light (check-in + at most ``arrival_day_activities``); the
departure day holds only check-out and the transfer; HIGH-risk weather days get indoor
activities only; interests are taken in turn, so they spread across days; no activity
appears twice. A city without place data in the catalogue gets kinds of activity ("a museum of
your choice"), and the first day says so. Owns: ``itinerary``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from navigo_core.planner.agents._common import city_name, data, entry, known_interest, lang_of, t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import Activity, ItineraryDay, PlannerState

NAME = "itinerary"
LATE_ARRIVAL_HOUR = 17


def ready(state: PlannerState) -> bool:
    return (state.user_request is not None and state.preferences is not None
            and state.destination_candidates is not None and state.weather is not None
            and state.flight_options is not None and state.itinerary is None and not state.blocked)


class _Picker:
    """Hands out catalogue activities without repeats, interests in turn."""

    def __init__(self, interests: list[str], city_key: str, city: str, lang: str) -> None:
        cat = data("activities")
        self.lang, self.city = lang, city
        self.order = [k for k in interests if known_interest(k)] or ["general"]
        self.pools: dict[str, list[dict[str, Any]]] = {}
        city_rows = (cat.get("cities") or {}).get(city_key, {})
        for key in [*self.order, "general"]:
            self.pools[key] = [*city_rows.get(key, []), *cat["activities"].get(key, [])]
        self.indoor_alt = list(cat["indoor_alternatives"])
        self.used: set[str] = set()
        self.turn = 0

    def _make(self, row: dict[str, Any], interest: str) -> Activity:
        self.used.add(row["id"])
        title = str(row.get(self.lang) or row["en"]).replace("{city}", self.city)
        return Activity(id=row["id"], title=title, interest=interest, indoor=bool(row.get("indoor")),
                        lat=row.get("lat"), lon=row.get("lon"))

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


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = state.user_request
    prefs = state.preferences
    lang = lang_of(state)
    start, end = req.start_date, req.end_date  # type: ignore[union-attr]
    n = (end - start).days + 1
    city = city_name(state, lang)
    cands = state.destination_candidates or []
    city_key = (cands[0].name if cands else getattr(req.destination, "name", "")).casefold()  # type: ignore[union-attr]
    picker = _Picker(prefs.prioritized_interests, city_key, city, lang)  # type: ignore[union-attr]
    plan_cfg = data("planning")
    per_day = int(plan_cfg["activities_per_day"].get(prefs.preferred_pace, 2))  # type: ignore[union-attr]
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
    if city_key not in (data("activities").get("cities") or {}):  # generic kinds of activity, said plainly
        days[0].notes.append(t("planner.itin.note_no_places", lang, city=city))
    update: dict[str, Any] = {"itinerary": days}
    n_acts = sum(1 for d in days for a in d.activities if a.kind == "activity")
    update.update(entry(NAME, deps, input_summary=f"{city}, {start}–{end}, interests {prefs.prioritized_interests}",  # type: ignore[union-attr]
                        evidence=[f"outbound offers: {len(state.flight_options or [])}, return offers: "
                                  f"{len(state.return_flight_options)}", f"HIGH-risk days: {high_days}",
                                  f"pace: {prefs.preferred_pace}"],  # type: ignore[union-attr]
                        output_summary=f"{len(days)} day(s), {n_acts} activities"))
    return update
