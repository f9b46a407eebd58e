"""Flight agent: outbound and return offers, and the recommended ones.

Owns: ``flight_options``, ``return_flight_options``, ``recommended_flight_id``,
``recommended_return_flight_id``, ``flight_note``, ``ground_distance_km`` (set when
no flight makes sense: the budget then prices ground transport).
"""

from __future__ import annotations

from typing import Any

from navigo_core.errors import NavigoError
from navigo_core.geo import haversine_m
from navigo_core.planner.agents._common import data, entry, lang_of, required, t, travellers
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PlannerState
from navigo_core.providers.flights import airports_for_city, recommend

NAME = "flights"


def ready(state: PlannerState) -> bool:
    return state.user_request is not None and state.flight_options is None and not state.blocked


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = required(state.user_request, "the user request")
    lang = lang_of(state)
    origin, dest = req.origin, req.destination
    update: dict[str, Any] = {"flight_options": [], "return_flight_options": [], "recommended_flight_id": None,
                              "recommended_return_flight_id": None, "flight_note": "", "ground_distance_km": None}
    evidence: list[str] = []
    flags: list[str] = []
    if origin is None or dest is None:
        update["flight_note"] = t("planner.flights.no_places", lang)
        update.update(entry(NAME, deps, input_summary="origin or destination unknown", evidence=evidence,
                            output_summary="no search"))
        return update
    try:
        o_codes, d_codes = airports_for_city(origin), airports_for_city(dest)
    except NavigoError:
        o_codes, d_codes = [], []
    evidence.append(f"airports: {o_codes[:2]} → {d_codes[:2]}")
    out: list[Any] = []
    back: list[Any] = []
    if o_codes and d_codes:
        start = required(req.start_date, "the start date")  # a complete request has its dates
        adults, children = max(1, req.adults or 1), req.children or 0
        try:
            out = deps.flights.search(o_codes[0], d_codes[0], start, adults=adults, children=children)
            if out and req.end_date and req.end_date > start:
                back = deps.flights.search(d_codes[0], o_codes[0], req.end_date, adults=adults, children=children)
        except NavigoError as exc:
            flags.append("FLIGHTS_UNAVAILABLE")
            update["flight_note"] = t("planner.flights.failed", lang, detail=exc.message(lang))
            evidence.append(f"provider error: {exc.code}")
    evidence.append(f"outbound offers: {len(out)}, return offers: {len(back)}")
    update["flight_options"] = out
    update["return_flight_options"] = back
    rec = recommend(out, required(req.start_date, "the start date")) if out else None
    rec_back = min(back, key=lambda f: (f.price, f.depart_at)) if back else None
    update["recommended_flight_id"] = rec.id if rec else None
    update["recommended_return_flight_id"] = rec_back.id if rec_back else None
    if not out and not flags:
        km = haversine_m(origin.lat, origin.lon, dest.lat, dest.lon) / 1000 * float(data("planning")["ground_circuity"])
        update["ground_distance_km"] = round(km, 1)
        update["flight_note"] = t("planner.flights.ground", lang, km=f"{km:,.0f}")
        evidence.append(f"no flight: ground distance ≈ {km:,.0f} km")
    if rec is not None and rec.estimated:
        evidence.append("offers are estimates (offline provider)")
    update.update(entry(NAME, deps, input_summary=f"{origin.name} → {dest.name}, {req.start_date}–{req.end_date}, "
                                                   f"{travellers(state)} traveller(s)",
                        evidence=evidence, risk_flags=flags,
                        output_summary=f"recommended: {update['recommended_flight_id'] or '-'} / "
                                       f"{update['recommended_return_flight_id'] or '-'}"))
    return update
