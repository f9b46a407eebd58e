"""Plan synthesizer: the final plan (summary + selections), or a safe refusal in the user's language.

The summary is written from a template; with an LLM, the model may rewrite the prose only
(``structured`` output; on ``LLMError`` the template is kept and the log says so). A
plan whose output the risk guard flagged is replaced by a refusal. Owns: ``final_plan``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from navigo_core.errors import LLMError
from navigo_core.i18n import detect_lang
from navigo_core.planner.agents._common import city_name, entry, lang_of, t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import FinalPlan, PlannerState
from navigo_core.security import detect_unsafe_output
from navigo_core.security.provider_text import scan_provider_text

NAME = "synthesizer"


class SummaryOut(BaseModel):
    summary: str


def ready(state: PlannerState) -> bool:
    if state.blocked or state.unsafe_output:
        return state.final_plan is None or not state.final_plan.refused
    return (state.final_plan is None and not state.llm_scan_pending and state.itinerary is not None and state.budget is not None
            and state.packing is not None)


def _lang(state: PlannerState) -> str:
    if state.parsed_request is not None:
        return lang_of(state)
    return detect_lang(state.natural_language)


def template_summary(state: PlannerState, lang: str) -> str:
    req = state.user_request
    b = state.budget
    n = len(state.itinerary or [])
    city = city_name(state, lang)
    status = (t("planner.summary.within", lang) if b and b.within_budget else
              t("planner.summary.over", lang) if b and b.within_budget is False else t("planner.summary.no_budget", lang))
    return t("planner.summary.text", lang, city=city, days=n, start=req.start_date, end=req.end_date,  # type: ignore[union-attr]
             total=f"{b.total:,.0f}" if b else "-", ccy=b.currency if b else "", status=status)


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    lang = _lang(state)
    if state.blocked or state.unsafe_output:
        key = "planner.refusal.injection" if state.blocked else "planner.refusal.unsafe"
        plan = FinalPlan(refused=True, summary=t(key, lang), safety_flags=list(state.safety_flags))
        update: dict[str, Any] = {"final_plan": plan}
        update.update(entry(NAME, deps, input_summary="safety flags present", evidence=list(state.safety_flags),
                            risk_flags=list(state.safety_flags), output_summary="safe refusal"))
        return update
    summary = template_summary(state, lang)
    mode = "rules"
    evidence = [f"days: {len(state.itinerary or [])}", f"budget flags: {state.budget.flags if state.budget else []}"]
    flagged = scan_provider_text([summary]) if deps.llm is not None else []  # the city name came from a provider
    if flagged:
        mode = "llm_fallback"
        evidence.append(f"provider text flagged ({', '.join(flagged)}); template summary used")
    elif deps.llm is not None:
        try:
            out = deps.llm.structured([
                {"role": "system", "content": "Rewrite the trip summary as 2-3 friendly sentences in the same language. "
                                              "Keep every number and date exactly. No new facts."},
                {"role": "user", "content": summary},
            ], SummaryOut)
            if out.summary.strip() and not detect_unsafe_output(out.summary):
                summary, mode = out.summary.strip(), "llm"
        except LLMError as exc:
            mode = "llm_fallback"
            evidence.append(f"LLM failed ({type(exc).__name__}); template summary used")
    b = state.budget
    cands = state.destination_candidates or []
    plan = FinalPlan(summary=summary, destination=cands[0].name if cands else city_name(state, "en"),
                     flight_id=state.recommended_flight_id, return_flight_id=state.recommended_return_flight_id,
                     days=len(state.itinerary or []), total=b.total if b else None, currency=b.currency if b else "",
                     within_budget=b.within_budget if b else None,
                     safety_flags=list(dict.fromkeys([*state.safety_flags, *(b.flags if b else [])])),
                     source="llm" if mode == "llm" else "rules")
    update = {"final_plan": plan}
    update.update(entry(NAME, deps, input_summary="itinerary, budget, packing", evidence=evidence, mode=mode,
                        risk_flags=flagged, output_summary=summary))
    return update
