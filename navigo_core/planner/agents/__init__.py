"""The planner agents, one module each. Every agent is ``run(state, deps) -> dict`` (a partial update of
the fields it owns, plus ``decision_log: [one entry]``; ``{}`` when its inputs are missing or its output
exists) and ``ready(state) -> bool`` (the supervisor's routing predicate).
"""

from __future__ import annotations

from navigo_core.planner.agents import (
    budget,
    destination,
    flights,
    form_completer,
    itinerary,
    packing,
    policy_check,
    preference,
    requirement_parser,
    risk_guard,
    risk_guard_llm,
    synthesizer,
    weather,
)

#: In routing order: the supervisor starts every agent whose ``ready`` holds, as soon as it holds.
AGENTS = {m.NAME: m for m in (risk_guard, risk_guard_llm, requirement_parser, form_completer, preference, destination, flights,
                              weather, itinerary, budget, policy_check, packing, synthesizer)}

__all__ = ["AGENTS"]
