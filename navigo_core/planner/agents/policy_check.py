"""Policy-check agent: the plan against the company travel policy (:mod:`navigo_core.policy`).

Once the budget exists it checks, for the destination's city tier and the traveller's grade:

* the accommodation line's room rate per night (amount / (nights × rooms)) vs the hotel cap;
* the recommended outbound flight's cabin vs the allowed cabin for its duration;
* daily food per traveller (amount / (days × travellers)) vs the meal allowance;
* days between today and the start date vs the advance-booking rule.

Grade: ``deps.settings.employee_grade`` when deps carry settings (else the global settings);
unknown or empty: the policy's lowest grade, an assumption stated in the decision log.
A policy file that does not load gives no excesses and its error in the log.
A leisure trip (no business-trip words in the request: :func:`is_business_trip`) is not checked.
Owns: ``policy_excesses`` (a list of :class:`navigo_core.policy.Excess` dumps).
"""

from __future__ import annotations

from typing import Any

from navigo_core.planner.agents._common import entry
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PlannerState

NAME = "policy_check"


def ready(state: PlannerState) -> bool:
    return state.budget is not None and state.policy_excesses is None and not state.blocked


def _settings(deps: PlannerDeps) -> Any:
    settings = getattr(deps, "settings", None)
    if settings is not None:
        return settings
    try:
        from navigo_core.config import get_settings

        return get_settings()
    except Exception:  # noqa: BLE001 - a broken environment must not stop the plan
        return None


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
    from navigo_core.policy import check_trip, policy_status

    settings = _settings(deps)
    policy, error = policy_status(getattr(settings, "travel_policy_file", "") or None)
    if policy is None:
        return {"policy_excesses": [], **entry(NAME, deps, input_summary="travel policy", evidence=[error or ""],
                                              output_summary="policy not loaded; nothing checked",
                                              risk_flags=["POLICY_UNAVAILABLE"])}
    budget = state.budget
    assert budget is not None
    evidence: list[str] = []
    raw_grade = str(getattr(settings, "employee_grade", "") or "").strip()
    grade = policy.parse_grade(raw_grade) if raw_grade else None
    if grade is None:
        grade = policy.lowest_grade
        evidence.append(f"assumption: grade {'unknown' if not raw_grade else repr(raw_grade) + ' not in policy'}; "
                        f"checked against the lowest grade {grade}")
    else:
        evidence.append(f"grade {grade} (settings)")
    req = state.user_request
    city: Any = (state.destination_candidates[0] if state.destination_candidates
                 else getattr(req, "destination", None) or getattr(req, "destination_text", "") or None)
    tier = policy.tier_of(city)
    evidence.append(f"destination {getattr(city, 'name', city) or '?'} → tier {tier.id}")
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
        ahead = (start - deps.today()).days
        evidence.append(f"start {start.isoformat()}: {ahead} day(s) ahead")
        if ahead < 0:  # a past trip: nothing left to book
            ahead = None
    excesses = check_trip(policy, city=city, grade=grade, nights=budget.nights, hotel_per_night=hotel_per_night,
                          cabin=cabin, flight_hours=hours, days=n_days, meals_per_day=meals,
                          booked_days_ahead=ahead, currency=ccy)
    dumps = [e.model_dump() | {"grade": grade, "tier": tier.id} for e in excesses]
    summary = ("compliant with the travel policy" if not excesses else
               "; ".join(f"{e.rule_id}" + (f" +{e.amount_over:g} {e.currency}" if e.amount_over else "") for e in excesses))
    return {"policy_excesses": dumps,
            **entry(NAME, deps, input_summary=f"policy {policy.name_en}, grade {grade}, tier {tier.id}",
                    evidence=evidence, output_summary=summary,
                    risk_flags=[f"POLICY_EXCESS:{e.rule_id}" for e in excesses])}
