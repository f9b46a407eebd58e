"""Policy-check agent: the plan against the company travel policy (:mod:`navigo_core.business.policy`).

Once the budget exists it checks, for the destination's city tier and the traveller's grade:

* the accommodation line's room rate per night (amount / (nights × rooms)) vs the hotel cap;
* the recommended outbound flight's cabin vs the allowed cabin for its duration;
* daily food per traveller (amount / (days × travellers)) vs the meal allowance;
* days between today and the start date vs the advance-booking rule.

Grade: ``navigo_core.business.policy.requested_grade`` of the deps (the user's kept grade: ``deps.user`` in
``deps.store``'s profiles, else ``deps.settings.employee_grade``), read by ``TravelPolicy.resolve_grade`` (the one
reader of a grade); unknown or empty: the policy's default grade, an assumption stated in the decision log. The policy file is
``deps.settings.travel_policy_file`` (no settings in the deps: the shipped policy); the global settings are
never read here. A policy file that does not load gives no excesses and its error in the log.
:func:`check_inputs` (what of the plan is checked) is shared with the travel application made from a plan
(:mod:`navigo_core.planner.application`).
A leisure trip (no business-trip words in the request: :func:`is_business_trip`) is not checked.
Owns: ``policy_excesses`` (a list of :class:`navigo_core.business.policy.Excess` dumps).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from navigo_core.planner.agents._common import entry
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PlannerState

NAME = "policy_check"


def ready(state: PlannerState) -> bool:
    return state.budget is not None and state.policy_excesses is None and not state.blocked


def check_inputs(state: PlannerState, today: date) -> tuple[dict[str, Any], list[str]]:
    """The plan's facts the policy checks (``check_trip``'s keyword arguments but ``policy`` and ``grade``) and
    the evidence lines saying where each comes from. Needs ``state.budget``."""
    budget = state.budget
    assert budget is not None
    evidence: list[str] = []
    req = state.user_request
    city: Any = (state.destination_candidates[0] if state.destination_candidates
                 else getattr(req, "destination", None) or getattr(req, "destination_text", "") or None)
    ccy = budget.currency
    lines = {line.category: line for line in budget.lines}
    hotel_per_night = None
    acc = lines.get("accommodation")
    if acc is not None and budget.nights > 0 and budget.rooms > 0 and acc.amount > 0:
        hotel_per_night = round(acc.amount / (budget.nights * budget.rooms), 2)
        evidence.append(f"room rate {hotel_per_night:g} {ccy}/night")
    n_days = len(state.itinerary or []) or max(1, budget.nights + 1)
    meals = None
    food = lines.get("food")
    if food is not None and food.amount > 0:
        meals = round(food.amount / (n_days * max(1, budget.travellers)), 2)
        evidence.append(f"food {meals:g} {ccy}/day per traveller")
    flight = state.flight_by_id(state.recommended_flight_id)
    cabin = flight.cabin if flight is not None else None
    hours = round(flight.duration_min / 60, 2) if flight is not None else None
    if flight is not None:
        evidence.append(f"flight {flight.id}: {cabin}, {hours:g} h")
    ahead = None
    start = getattr(req, "start_date", None)
    if start is not None:
        ahead = (start - today).days
        evidence.append(f"start {start.isoformat()}: {ahead} day(s) ahead")
        if ahead < 0:  # a past trip: nothing left to book
            ahead = None
    return (dict(city=city, nights=budget.nights, hotel_per_night=hotel_per_night, cabin=cabin, flight_hours=hours,
                 days=n_days, meals_per_day=meals, booked_days_ahead=ahead, currency=ccy), evidence)


def is_business_trip(state: PlannerState) -> bool:
    """The request says it is a business trip (出差, a client, a conference …:
    :func:`navigo_core.understand.purpose.is_business`, the routing rules' ``business`` words too);
    a leisure trip is not held to the company's travel policy."""
    from navigo_core.understand.purpose import is_business

    return any(is_business(text) for text in state.inputs())


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    if not is_business_trip(state):
        return {"policy_excesses": [], **entry(NAME, deps, input_summary="travel policy",
                                              evidence=["no business-trip words in the request"],
                                              output_summary="leisure trip: the company travel policy does not apply")}
    from navigo_core.business.policy import check_trip, grade_note, policy_status, requested_grade_origin

    settings = getattr(deps, "settings", None)  # injected (make_planner_deps); never the global settings
    policy, error = policy_status(getattr(settings, "travel_policy_file", "") or None)
    if policy is None:
        return {"policy_excesses": [], **entry(NAME, deps, input_summary="travel policy", evidence=[error or ""],
                                              output_summary="policy not loaded; nothing checked",
                                              risk_flags=["POLICY_UNAVAILABLE"])}
    raw_grade, origin = requested_grade_origin(deps, "", policy)
    grade, assumed = policy.resolve_grade(raw_grade)
    evidence = [f"assumption: {grade_note(policy, raw_grade, 'en')}" if assumed else f"grade {grade} ({origin})"]
    inputs, found = check_inputs(state, deps.today())
    city = inputs["city"]
    tier = policy.tier_of(city)
    evidence += [f"destination {getattr(city, 'name', city) or '?'} → tier {tier.id}", *found]
    excesses = check_trip(policy, grade=grade, **inputs)
    dumps = [e.model_dump() | {"grade": grade, "tier": tier.id} for e in excesses]
    summary = ("compliant with the travel policy" if not excesses else
               "; ".join(f"{e.rule_id}" + (f" +{e.amount_over:g} {e.currency}" if e.amount_over else "") for e in excesses))
    return {"policy_excesses": dumps,
            **entry(NAME, deps, input_summary=f"policy {policy.name_en}, grade {grade}, tier {tier.id}",
                    evidence=evidence, output_summary=summary,
                    risk_flags=[f"POLICY_EXCESS:{e.rule_id}" for e in excesses])}
