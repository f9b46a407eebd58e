"""Preference agent: the request → a structured travel profile (``preferences``).

Offline: rules over the text (relaxed/packed words, budget per traveller per day →
accommodation tier). With an LLM: ``structured`` output; on ``LLMError`` the rules are
used and the log says so. Interests the user gave explicitly always win over the model's.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from navigo_core.errors import LLMError, NavigoError, describe_failure
from navigo_core.planner.agents._common import canonical_interests, entry, required, travellers
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import Preferences, PlannerState, Tier

NAME = "preference"
Style = Literal["relaxed", "balanced", "packed"]
Pace = Literal["slow", "normal", "fast"]
_PACE: dict[Style, Pace] = {"relaxed": "slow", "balanced": "normal", "packed": "fast"}

RELAXED = re.compile(r"relax|slow|chill|leisure|easy|轻松|悠闲|慢|休闲|不累", re.I)
PACKED = re.compile(r"packed|busy|as much as|intense|紧凑|多去|特种兵|暴走", re.I)
PREMIUM = re.compile(r"luxury|premium|five.star|5.star|豪华|奢华|五星", re.I)
BUDGET_WORDS = re.compile(r"\bcheap|on a (?:tight )?budget|budget (?:hotel|room|travel|trip)s?|hostel|backpack|省钱|便宜|穷游|青旅|经济型", re.I)
#: budget per traveller per day (USD) thresholds for the tier: below budget_max → budget, above luxury_min → luxury
TIER_USD = {"budget_max": 60.0, "luxury_min": 300.0}
MAX_INTERESTS = 8  # the schema's maxItems (a longer list from the model is cut)


class PreferencesOut(BaseModel):
    travel_style: Literal["relaxed", "balanced", "packed"]
    prioritized_interests: list[str] = Field(default_factory=list, max_length=MAX_INTERESTS)
    preferred_pace: Literal["slow", "normal", "fast"]
    accommodation_preference: Literal["budget", "mid", "luxury"]

    @field_validator("prioritized_interests", mode="before")
    @classmethod
    def _cap(cls, v: Any) -> Any:
        return v[:MAX_INTERESTS] if isinstance(v, list) else v


def ready(state: PlannerState) -> bool:
    return state.user_request is not None and state.preferences is None and not state.blocked


def _per_day_usd(state: PlannerState, deps: PlannerDeps) -> float | None:
    req = state.user_request
    if req is None or req.budget is None or req.start_date is None or req.end_date is None:
        return None
    days = (req.end_date - req.start_date).days + 1
    try:
        usd = deps.prices.convert(req.budget.amount, req.budget.currency, "USD")
    except NavigoError:
        return None
    return usd / max(1, days) / travellers(state)


def rules(state: PlannerState, deps: PlannerDeps) -> Preferences:
    text = " ".join(state.inputs())
    style: Style = "relaxed" if RELAXED.search(text) else "packed" if PACKED.search(text) else "balanced"
    pace = _PACE[style]
    per_day = _per_day_usd(state, deps)
    tier: Tier
    if PREMIUM.search(text):
        tier = "luxury"
    elif BUDGET_WORDS.search(text):
        tier = "budget"
    elif per_day is not None and per_day < TIER_USD["budget_max"]:
        tier = "budget"
    elif per_day is not None and per_day > TIER_USD["luxury_min"]:
        tier = "luxury"
    else:
        tier = "mid"
    interests = canonical_interests(list(required(state.user_request, "the user request").interests or []))
    return Preferences(travel_style=style, preferred_pace=pace, accommodation_preference=tier,
                       prioritized_interests=interests, source="rules")


def _llm(state: PlannerState, deps: PlannerDeps, base: Preferences) -> Preferences:
    req = required(state.user_request, "the user request")
    messages = [
        {"role": "system", "content": "Extract a traveller's preferences from their request. Answer only with the schema. "
                                      "accommodation_preference: budget, mid or luxury. Interests: short lower-case English words."},
        {"role": "user", "content": f"Request: {state.natural_language}\nBudget: {req.budget}\n"
                                    f"Dates: {req.start_date} to {req.end_date}\nInterests given: {req.interests}"},
    ]
    out = deps.llm.structured(messages, PreferencesOut)
    interests = base.prioritized_interests or canonical_interests(out.prioritized_interests)
    return Preferences(travel_style=out.travel_style, preferred_pace=out.preferred_pace,
                       accommodation_preference=out.accommodation_preference,
                       prioritized_interests=interests, source="llm")


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    prefs = rules(state, deps)
    mode = "rules"
    evidence = [f"budget: {required(state.user_request, 'the user request').budget}",
                f"interests: {', '.join(prefs.prioritized_interests) or '-'}"]
    per_day = _per_day_usd(state, deps)
    if per_day is not None:
        evidence.append(f"budget per traveller per day ≈ {per_day:,.0f} USD")
    if deps.llm is not None:
        try:
            prefs = _llm(state, deps, prefs)
            mode = "llm"
        except LLMError as exc:
            mode = "llm_fallback"
            evidence.append(f"LLM failed ({describe_failure(exc)}); offline rules used")
    update: dict[str, Any] = {"preferences": prefs}
    update.update(entry(NAME, deps, input_summary=state.natural_language, evidence=evidence, mode=mode,
                        output_summary=f"style {prefs.travel_style}, pace {prefs.preferred_pace}, "
                                       f"tier {prefs.accommodation_preference}"))
    return update
