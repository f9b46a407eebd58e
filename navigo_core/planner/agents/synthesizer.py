"""Plan synthesizer: the final plan (summary + selections), or a safe refusal in the user's language.

The summary is written from a template; with an LLM, the model may rewrite the prose only
(``structured`` output; on ``LLMError`` the template is kept and the log says so, naming the bound
a call hit). The rewrite is checked before it is used (:func:`rewrite_problems`): the user's
language, every number, date and the city of the template kept, the estimated total not turned into
the budget, no place and no other proper name that neither the template nor the request has;
otherwise the template stays and the log lists the problems. A plan whose output the risk guard
flagged is replaced by a refusal; one blocked only by the LLM scan gets a refusal that accuses
nobody of an attack. Owns: ``final_plan``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import re

from navigo_core.errors import LLMError, describe_failure
from navigo_core.i18n import detect_lang
from navigo_core.planner.agents._common import city_name, entry, lang_of, required, t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import FinalPlan, PlannerState
from navigo_core.security import detect_unsafe_output
from navigo_core.security.provider_text import scan_provider_text
from navigo_core.understand.checks import Facts, language_ok, missing_facts, new_names, new_places, place_names

LLM_ONLY_FLAG = "BLOCKED_PROMPT_INJECTION:llm"

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
    req = required(state.user_request, "the user request")
    b = state.budget
    n = len(state.itinerary or [])
    city = city_name(state, lang)
    status = (t("planner.summary.within", lang) if b and b.within_budget else
              t("planner.summary.over", lang) if b and b.within_budget is False else t("planner.summary.no_budget", lang))
    return t("planner.summary.text", lang, city=city, days=n, start=req.start_date, end=req.end_date,
             total=f"{b.total:,.0f}" if b else "-", ccy=b.currency if b else "", status=status)


def _facts(state: PlannerState, lang: str) -> Facts:
    req = state.user_request
    b = state.budget
    cands = state.destination_candidates or []
    names = place_names(req.destination if req else None, city_name(state, lang), city_name(state, "en"),
                        *((cands[0].name, cands[0].name_zh) if cands else ()))
    dates = [d for d in ((req.start_date, req.end_date) if req else ()) if d is not None]
    numbers = [float(len(state.itinerary or []))] + ([round(b.total)] if b else [])
    return Facts(places=[names] if names else [], dates=list(dict.fromkeys(dates)), numbers=numbers)


def rewrite_problems(rewrite: str, template: str, state: PlannerState, lang: str) -> list[str]:
    """Why the model's rewrite of ``template`` cannot be shown ([] when it can)."""
    if not rewrite:
        return ["empty"]
    out: list[str] = []
    if not language_ok(rewrite, lang):
        out.append("language")
    out += [f"missing {m}" for m in missing_facts(rewrite, _facts(state, lang))]
    b = state.budget
    if b is not None and (b.budget is None or round(b.budget) != round(b.total)):
        total = f"{b.total:,.0f}"
        digits = total.replace(",", "")
        rx = rf"(?:budget|预算)[^\d。.;；\n]{{0,16}}(?:{re.escape(total)}|{digits})(?!\d)"
        if re.search(rx, rewrite, re.IGNORECASE):
            out.append("the estimated total is called the budget")
    allowed = [template, *state.inputs(), *(c.name for c in state.destination_candidates or []),
               *(c.name_zh for c in state.destination_candidates or [])]
    req = state.user_request
    if req is not None and req.destination is not None:
        allowed += [req.destination.country_name, req.destination.country_name_zh, req.destination.admin,
                    req.destination.admin_zh]
    out += [f"new place {p}" for p in new_places(rewrite, allowed)]
    out += [f"new name {n}" for n in new_names(rewrite, allowed) if not any(n in o for o in out)]
    return out


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    lang = _lang(state)
    if state.blocked or state.unsafe_output:
        injection = [f for f in state.safety_flags if f.startswith("BLOCKED_PROMPT_INJECTION:")]
        key = ("planner.refusal.unsafe" if not state.blocked else
               "planner.refusal.llm_scan" if injection == [LLM_ONLY_FLAG] else "planner.refusal.injection")
        plan = FinalPlan(refused=True, summary=t(key, lang), safety_flags=list(state.safety_flags))
        update: dict[str, Any] = {"final_plan": plan}
        update.update(entry(NAME, deps, input_summary="safety flags present", evidence=list(state.safety_flags),
                            risk_flags=list(state.safety_flags), output_summary="safe refusal"))
        return update
    summary = template_summary(state, lang)
    mode = "rules"
    evidence = [f"days: {len(state.itinerary or [])}", f"budget flags: {state.budget.flags if state.budget else []}"]
    flagged = scan_provider_text([city_name(state, lang)]) if deps.llm is not None else []  # a provider's name
    if flagged:
        mode = "llm_fallback"
        evidence.append(f"provider text flagged ({', '.join(flagged)}); template summary used")
    elif deps.llm is not None:
        try:
            out = deps.llm.structured([
                {"role": "system", "content": "Rewrite the trip summary as 2-3 friendly sentences in the same language. "
                                              "Keep every number and date exactly and the city's name. "
                                              "The total is an estimate, not the budget. No new facts: name no "
                                              "other place or sight."},
                {"role": "user", "content": summary},
            ], SummaryOut)
            rewrite = out.summary.strip()
            problems = rewrite_problems(rewrite, summary, state, lang)
            if problems:
                mode = "llm_fallback"
                evidence.append(f"LLM summary rejected ({'; '.join(problems)}); template summary used")
            elif rewrite and not detect_unsafe_output(rewrite):
                summary, mode = rewrite, "llm"
                evidence.append("LLM summary checked: language, numbers, dates, places")
        except LLMError as exc:
            mode = "llm_fallback"
            evidence.append(f"LLM failed ({describe_failure(exc)}); template summary used")
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
