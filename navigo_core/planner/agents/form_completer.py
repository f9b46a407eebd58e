"""Form completer: is the parsed request enough? → ``user_request`` or 1–2 ``pending_questions``.

Owns: ``user_request``, ``pending_questions``.
"""

from __future__ import annotations

from typing import Any

from navigo_core.planner.agents._common import entry, lang_of
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.request import apply_defaults, missing_fields, questions_for
from navigo_core.planner.state import PlannerState

NAME = "form_completer"
MAX_QUESTIONS = 2


def ready(state: PlannerState) -> bool:
    return (state.parsed_request is not None and state.user_request is None and not state.pending_questions
            and state.scanned_inputs >= len(state.inputs()) and not state.blocked)


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = state.parsed_request
    lang = lang_of(state)
    missing = list(missing_fields(req))
    if missing:
        questions = list(questions_for(req, lang))[:MAX_QUESTIONS]
        update: dict[str, Any] = {"pending_questions": questions}
        update.update(entry(NAME, deps, input_summary=f"parsed request ({lang})",
                            evidence=[f"missing: {', '.join(missing)}"],
                            output_summary=f"{len(questions)} question(s): " + " | ".join(q.text for q in questions)))
        return update
    complete = apply_defaults(req)
    update = {"user_request": complete, "pending_questions": []}
    update.update(entry(NAME, deps, input_summary=f"parsed request ({lang})",
                        evidence=["all required fields present",
                                  f"dates: {complete.start_date} → {complete.end_date}",
                                  f"travellers: {complete.adults} adult(s), {complete.children} child(ren)"],
                        output_summary="user request complete"))
    return update
