"""Risk guard, LLM layer: the model's second opinion on inputs the rules passed.

Runs in the background (scheduled by :mod:`.risk_guard`). On an LLM error the scan adds no
flag (the rules stand alone) and the log entry says so with ``mode="llm_fallback"``. The verdict is
advisory (:func:`~navigo_core.security.llm_scan.llm_scan_result`): a "yes" blocks only with the learned
detector's suspicion or above the configured confidence; otherwise the log records it and planning goes
on. Owns: ``safety_flags``, ``llm_scan_pending``, ``llm_scanned_inputs``.
"""

from __future__ import annotations

from typing import Any

from navigo_core.planner.agents._common import entry
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PlannerState
from navigo_core.security.llm_scan import llm_scan_result

NAME = "risk_guard_llm"


def ready(state: PlannerState) -> bool:
    return state.llm_scan_pending


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    texts = state.inputs()[state.llm_scanned_inputs:state.scanned_inputs]
    found: list[str] = []
    errors: list[str] = []
    verdicts: list[str] = []
    advisory = False
    for text in texts:
        result = llm_scan_result(text, deps.llm)
        found.extend(result.flags)
        errors.extend([result.error] if result.error else [])
        if result.verdict is not None:
            verdicts.append(f"LLM verdict: {'injection' if result.verdict.is_injection else 'clean'}; {result.basis}")
            advisory = advisory or result.advisory
    update: dict[str, Any] = {"safety_flags": list(dict.fromkeys([*state.safety_flags, *found])),
                              "llm_scan_pending": False, "llm_scanned_inputs": state.scanned_inputs}
    summary = "blocked" if found else "clean (the LLM's verdict was advisory: not blocking)" if advisory else "clean"
    update.update(entry(NAME, deps, input_summary=f"input: {texts[-1][:200] if texts else '-'}",
                        mode="llm_fallback" if errors else "llm",
                        evidence=[f"texts scanned by the LLM: {len(texts)}", *verdicts,
                                  *(f"LLM failed: {e}" for e in errors)],
                        output_summary=summary, risk_flags=found))
    return update
