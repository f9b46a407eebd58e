"""Risk guard: first and last line of defence (prompt injection in, unsafe content out).

Input: every user text not yet scanned (the request and any follow-up answers) →
``detect_prompt_injection`` rules (cheap, blocking: nothing is parsed before they pass).
With an LLM and clean rules, the LLM's second opinion (:mod:`.risk_guard_llm`) is
scheduled: it runs in the background while planning goes on, and the synthesizer waits
for its verdict, so a flagged request still ends in a refusal. Skipped when flags exist.
Output: once the final plan exists, ``detect_unsafe_output`` on its summary and day texts.
Owns: ``safety_flags``, ``scanned_inputs``, ``output_checked``, ``llm_scan_pending``.
"""

from __future__ import annotations

from typing import Any

from navigo_core.planner.agents._common import entry
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PlannerState
from navigo_core.security import detect_prompt_injection, detect_unsafe_output

NAME = "risk_guard"


def ready(state: PlannerState) -> bool:
    return state.scanned_inputs < len(state.inputs()) or (state.final_plan is not None and not state.output_checked)


def output_text(state: PlannerState) -> str:
    parts: list[str] = []
    if state.final_plan is not None:
        parts.append(state.final_plan.summary)
    for day in state.itinerary or []:
        parts.extend(a.title for a in day.activities)
        parts.extend(day.notes)
    parts.extend(tip for tip in (state.budget.tips if state.budget else []))
    return "\n".join(parts)


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    texts = state.inputs()
    if state.scanned_inputs < len(texts):
        new = texts[state.scanned_inputs:]
        found: list[str] = []
        for text in new:
            found.extend(detect_prompt_injection(text))
        llm_due = deps.llm is not None and not found and not state.safety_flags
        evidence = [f"texts scanned: {len(new)}", "rule scan" + ("; LLM scan scheduled" if llm_due else "")]
        flags = list(dict.fromkeys([*state.safety_flags, *found]))
        update: dict[str, Any] = {"safety_flags": flags, "scanned_inputs": len(texts), "llm_scan_pending": llm_due}
        update.update(entry(NAME, deps, input_summary=f"input: {new[-1][:200]}", evidence=evidence,
                            output_summary="blocked" if found else "clean", risk_flags=found))
        return update
    if state.final_plan is not None and not state.output_checked:
        found = detect_unsafe_output(output_text(state))
        flags = list(dict.fromkeys([*state.safety_flags, *found]))
        update = {"safety_flags": flags, "output_checked": True}
        update.update(entry(NAME, deps, input_summary="output: final plan summary and itinerary",
                            evidence=[f"chars scanned: {len(output_text(state))}"],
                            output_summary="unsafe output" if found else "clean", risk_flags=found))
        return update
    return {}
