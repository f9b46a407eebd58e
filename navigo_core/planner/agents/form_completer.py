"""Form completer: is the parsed request enough? → ``user_request`` or 1–2 ``pending_questions``.

A missing, unknown or ambiguous destination (the destination is required), missing dates or
budget, and every ambiguity the parser reported become questions with quick replies (the
candidate places, the dates of a month …). When the destination is missing and the user asked
for ideas, the catalogue's suggestions are the quick replies. Owns: ``user_request``,
``pending_questions``.
"""

from __future__ import annotations

from typing import Any

from navigo_core.planner.agents._common import canonical_interests, entry, lang_of, required
from navigo_core.planner.agents.destination import alternatives, asks_for_ideas
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.request import Question, TravelRequest, apply_defaults, missing_fields, questions_for
from navigo_core.planner.state import PlannerState

NAME = "form_completer"
MAX_QUESTIONS = 2


def ready(state: PlannerState) -> bool:
    return (state.parsed_request is not None and state.user_request is None and not state.pending_questions
            and state.scanned_inputs >= len(state.inputs()) and not state.blocked)


def _with_ideas(q: Question, req: TravelRequest, state: PlannerState, lang: str) -> Question:
    if q.field != "destination" or q.options or req.destination_text or not asks_for_ideas(state.inputs()):
        return q
    ideas = alternatives(None, req.origin, canonical_interests(list(req.interests)), lang, limit=3)
    return q.model_copy(update={"options": [(c.name_zh if lang == "zh" else "") or c.name for c in ideas]})


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = required(state.parsed_request, "the parsed request")
    lang = lang_of(state)
    questions = [_with_ideas(q, req, state, lang) for q in questions_for(req, lang)][:MAX_QUESTIONS]
    if questions:
        missing = missing_fields(req)
        update: dict[str, Any] = {"pending_questions": questions}
        update.update(entry(NAME, deps, input_summary=f"parsed request ({lang})",
                            evidence=[f"missing: {', '.join(missing) or '-'}",
                                      *[f"ambiguous {a.field}: {a.text} ({len(a.candidates)} candidates)"
                                        for a in req.ambiguities]],
                            output_summary=f"{len(questions)} question(s): " + " | ".join(q.text for q in questions)))
        return update
    complete = apply_defaults(req)
    update = {"user_request": complete, "pending_questions": []}
    update.update(entry(NAME, deps, input_summary=f"parsed request ({lang})",
                        evidence=["all required fields present",
                                  f"destination: {complete.destination.label if complete.destination else '-'}",
                                  f"dates: {complete.start_date} → {complete.end_date}",
                                  f"travellers: {complete.adults} adult(s), {complete.children} child(ren)"],
                        output_summary="user request complete"))
    return update
