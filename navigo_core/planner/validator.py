"""Deterministic checks of a finished plan. Violations are reported, never silently fixed.

Codes: DAY_COUNT, DATE_ORDER, WRONG_CITY, ARRIVAL_DAY, ARRIVAL_HEAVY, DEPARTURE_DAY,
UNKNOWN_FLIGHT, REPEATED_ACTIVITY, HIGH_RISK_OUTDOOR, BUDGET_SUM, BUDGET_FLAG, INCOMPLETE.
"""

from __future__ import annotations

from datetime import timedelta

from navigo_core.i18n import t
from navigo_core.planner.agents._common import city_name, data, lang_of
from navigo_core.planner.state import BUDGET_EXCEEDED, PlannerState, Violation


def validate(state: PlannerState, lang: str | None = None) -> list[Violation]:
    lang = lang or lang_of(state)
    out: list[Violation] = []

    def add(code: str, key: str, day: int | None = None, **params: object) -> None:
        out.append(Violation(code=code, message=t(f"planner.validation.{key}", lang, **params), day=day))

    req = state.user_request
    missing = [n for n, v in (("user_request", req), ("itinerary", state.itinerary), ("budget", state.budget),
                              ("packing", state.packing), ("final_plan", state.final_plan)) if v is None]
    if missing:
        add("INCOMPLETE", "incomplete", missing=", ".join(missing))
    days = state.itinerary or []
    if req is not None and req.start_date and req.end_date and state.itinerary is not None:
        want = (req.end_date - req.start_date).days + 1
        if len(days) != want:
            add("DAY_COUNT", "day_count", got=len(days), want=want)
        for i, d in enumerate(days):
            expected = req.start_date + timedelta(days=i)
            if d.date != expected:
                add("DATE_ORDER", "date_order", day=d.day, got=d.date, want=expected)
        city = city_name(state, lang)
        for d in days:
            if city and d.city != city:
                add("WRONG_CITY", "city", day=d.day, got=d.city, want=city)
    if days:
        first, last = days[0], days[-1]
        if not any(a.kind == "arrival" for a in first.activities):
            add("ARRIVAL_DAY", "arrival", day=first.day)
        limit = int(data("planning")["arrival_day_activities"])
        n_first = sum(1 for a in first.activities if a.kind == "activity")
        if len(days) > 1 and n_first > limit:
            add("ARRIVAL_HEAVY", "arrival_heavy", day=first.day, n=n_first, max=limit)
        if len(days) > 1 and (not any(a.kind == "departure" for a in last.activities)
                              or any(a.kind == "activity" for a in last.activities)):
            add("DEPARTURE_DAY", "departure", day=last.day)
        for d in days:
            if d.weather_risk == "HIGH":
                for a in d.activities:
                    if a.kind == "activity" and not a.indoor:
                        add("HIGH_RISK_OUTDOOR", "high_risk", day=d.day, title=a.title)
    seen: set[str] = set()
    for d in days:
        for a in d.activities:
            if a.id in seen:
                add("REPEATED_ACTIVITY", "repeat", day=d.day, id=a.id)
            seen.add(a.id)
    offers = {f.id for f in [*(state.flight_options or []), *state.return_flight_options]}
    refs = [state.recommended_flight_id, state.recommended_return_flight_id]
    if state.final_plan is not None:
        refs += [state.final_plan.flight_id, state.final_plan.return_flight_id]
    refs += [a.flight_id for d in days for a in d.activities]
    for ref in dict.fromkeys(r for r in refs if r):
        if ref not in offers:
            add("UNKNOWN_FLIGHT", "flight", id=ref)
    b = state.budget
    if b is not None:
        s = round(sum(x.amount for x in b.lines), 2)
        if abs(s - b.total) > 0.01:
            add("BUDGET_SUM", "budget_sum", sum=f"{s:,.2f}", total=f"{b.total:,.2f}")
        if b.budget is not None:
            over = b.total > b.budget + 0.005
            if over != (BUDGET_EXCEEDED in b.flags) or b.within_budget is over:
                add("BUDGET_FLAG", "budget_flag", total=f"{b.total:,.2f}", budget=f"{b.budget:,.2f}")
    return out
