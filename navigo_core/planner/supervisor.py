"""The supervisor: routes by what the state still lacks, runs independent agents concurrently.

It starts every agent whose ``ready(state)`` holds as soon as it holds (e.g. preference,
destination, flights and weather together in a thread pool, and the LLM's injection scan
in the background), merges each partial update when it arrives (the decision log is
appended to, never rewritten) and stops when nothing is ready or running. It
stops with ``needs_input`` when the form completer asks questions, ``refused`` when the
risk guard blocks, else validates and finishes ``done``.

Events: ``on_event(agent, status, message)`` with status started | done | failed | skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from navigo_core.errors import InputError, NavigoError
from navigo_core.i18n import detect_lang, t
from navigo_core.limits import Limits, check_message
from navigo_core.planner.agents import AGENTS
from navigo_core.planner.deps import PlannerDeps, make_planner_deps
from navigo_core.planner.state import DecisionLogEntry, PlannerState
from navigo_core.planner.validator import validate

EventCallback = Callable[[str, str, str], None]
MAX_STEPS = 200
VALIDATOR = "validator"

__all__ = ["AGENTS", "EventCallback", "interrupted", "make_planner_deps", "plan", "replay", "resume", "run", "started"]


def _emit(on_event: EventCallback | None, agent: str, status: str, lang: str, detail: str = "") -> None:
    if on_event is None:
        return
    try:
        on_event(agent, status, t(f"planner.event.{status}", lang, agent=agent, detail=detail))
    except Exception:  # a broken progress display never breaks planning
        pass


def _call(name: str, state: PlannerState, deps: PlannerDeps) -> tuple[str, dict[str, Any] | None, Exception | None]:
    try:
        return name, AGENTS[name].run(state, deps), None
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported as a failed agent, in the log and the events
        return name, None, exc


def _finish_agent(state: PlannerState, name: str, update: dict[str, Any] | None, exc: Exception | None,
                  deps: PlannerDeps, on_event: EventCallback | None, failed: set[str]) -> tuple[PlannerState, bool]:
    """Merge one agent's result; returns the new state and whether it changed."""
    lang = state.lang
    if exc is not None:
        failed.add(name)
        detail = exc.message(lang) if isinstance(exc, NavigoError) else f"{type(exc).__name__}: {exc}"
        state = state.merged({"decision_log": [DecisionLogEntry(
            agent=name, input_summary="(agent raised)", evidence=[detail[:300]], output_summary="failed",
            risk_flags=[f"AGENT_FAILED:{name}"], timestamp=deps.now_iso())]})
        _emit(on_event, name, "failed", lang, detail)
        return state, True
    if not update:
        _emit(on_event, name, "skipped", lang)
        return state, False
    state = state.merged(update)
    _emit(on_event, name, "done", state.lang)
    return state, True


def run(state: PlannerState, deps: PlannerDeps, *, on_event: EventCallback | None = None) -> PlannerState:
    """Advance ``state`` as far as it goes (see the module docstring).

    Dataflow scheduling: every agent whose ``ready(state)`` holds is started at once (in a
    thread pool when another agent is already running), on a snapshot of the state; as
    each one finishes its update is merged and the ready set is recomputed. Agents write
    disjoint fields, so merge order does not matter (the log records completion order).
    """
    state = state.model_copy(update={"status": "running"})
    failed: set[str] = set()
    ran: set[str] = set()
    stalled: set[str] = set()  # ready but returned {}: not retried until the state changes
    inflight: dict[Future, str] = {}
    pool: ThreadPoolExecutor | None = None
    try:
        for _ in range(MAX_STEPS):
            busy = set(inflight.values())
            ready = [n for n, m in AGENTS.items()
                     if n not in failed and n not in busy and n not in stalled and m.ready(state)]
            if not ready and not inflight:
                break
            for name in ready:
                _emit(on_event, name, "started", state.lang)
            if len(ready) == 1 and not inflight:  # nothing to overlap with: run inline
                name, update, exc = _call(ready[0], state, deps)
                ran.add(name)
                state, changed = _finish_agent(state, name, update, exc, deps, on_event, failed)
                stalled = set() if changed else stalled | {name}
                continue
            pool = pool or ThreadPoolExecutor(max_workers=deps.max_workers, thread_name_prefix="planner")
            snapshot = state
            for name in ready:
                inflight[pool.submit(_call, name, snapshot, deps)] = name
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for fut in [f for f in inflight if f in done]:
                inflight.pop(fut)
                name, update, exc = fut.result()
                ran.add(name)
                state, changed = _finish_agent(state, name, update, exc, deps, on_event, failed)
                stalled = set() if changed else stalled | {name}
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    if state.pending_questions and state.user_request is None and not state.blocked:
        for name in AGENTS:
            if name not in ran:
                _emit(on_event, name, "skipped", state.lang)
        return state.model_copy(update={"status": "needs_input"})
    if state.blocked or state.unsafe_output:
        for name in AGENTS:
            if name not in ran:
                _emit(on_event, name, "skipped", state.lang)
        return state.model_copy(update={"status": "refused"})
    _emit(on_event, VALIDATOR, "started", state.lang)
    violations = validate(state)
    state = state.merged({"validation": violations, "decision_log": [DecisionLogEntry(
        agent=VALIDATOR, input_summary="final state", evidence=[v.code for v in violations],
        output_summary=f"{len(violations)} violation(s)", risk_flags=[f"VALIDATION:{v.code}" for v in violations],
        timestamp=deps.now_iso())]})
    _emit(on_event, VALIDATOR, "done", state.lang)
    return state.model_copy(update={"status": "done"})


def _limits(deps: PlannerDeps) -> Limits | None:
    """The limits of the deps' settings (None without settings: the limits in force)."""
    return Limits.from_settings(deps.settings) if deps.settings is not None else None


def plan(text: str, deps: PlannerDeps, *, on_event: EventCallback | None = None) -> PlannerState:
    """Plan a trip from free text. Raises ``InputError("planner.cli.empty")`` for empty text and
    ``InputError("limits.message_too_long")`` above the message limit (before any agent runs)."""
    if not text or not text.strip():
        raise InputError("planner.cli.empty")
    check_message(text, _limits(deps))
    state = PlannerState(natural_language=text.strip(), lang=detect_lang(text))  # type: ignore[arg-type]
    return run(state, deps, on_event=on_event)


def resume(state: PlannerState, answer: str, deps: PlannerDeps, *, on_event: EventCallback | None = None) -> PlannerState:
    """Continue a ``needs_input`` plan with the user's answer to the pending questions (the questions'
    fields tell the parser what a bare answer fills; a quick reply of a place question picks it)."""
    from navigo_core.planner.request import apply_answer

    if not answer or not answer.strip():
        raise InputError("planner.cli.empty")
    check_message(answer, _limits(deps))
    if state.status != "needs_input" or state.parsed_request is None:
        return state
    new = state.model_copy(update={"answers": [*state.answers, answer.strip()]})
    # the risk guard scans the answer first; only a clean answer reaches the parser
    from navigo_core.planner.agents import risk_guard

    _emit(on_event, risk_guard.NAME, "started", new.lang)
    new = new.merged(risk_guard.run(new, deps))
    _emit(on_event, risk_guard.NAME, "done", new.lang)
    if new.blocked:
        return run(new, deps, on_event=on_event)
    # the request as it was (checked above; the risk guard changes only its flags and counters)
    req = apply_answer(state.parsed_request, answer.strip(), today=deps.today(), places=deps.places, llm=deps.llm,
                       expect=[q.field for q in state.pending_questions])
    new = new.model_copy(update={"parsed_request": req, "pending_questions": [], "user_request": None})
    return run(new, deps, on_event=on_event)


# --- durability: what is saved before a run, and running it again after a restart ---------------------

def started(text: str, previous: PlannerState | None = None, answer: str | None = None) -> PlannerState:
    """The state to save *before* planning starts: the request (and, when answering ``previous``'s
    questions, every answer so far and this one) with status ``running``. If the app stops while the
    agents run, this is what the store holds, and :func:`replay` runs it again; nothing typed is lost."""
    if previous is not None and answer is not None:
        check_message(answer)
        return previous.model_copy(update={"answers": [*previous.answers, answer.strip()], "status": "running"})
    check_message(text)
    return PlannerState(natural_language=(text or "").strip(), lang=detect_lang(text or ""))  # type: ignore[arg-type]


def interrupted(state: PlannerState) -> bool:
    """A saved state whose run never finished (saved by :func:`started`, then the app stopped)."""
    return state.status == "running"


def replay(state: PlannerState, deps: PlannerDeps, *, on_event: EventCallback | None = None) -> PlannerState:
    """Run an interrupted request again: the request, then each answer it had, in order (an answer is
    used only while the plan still asks; the planner decides the rest as it did the first time)."""
    new = plan(state.natural_language, deps, on_event=on_event)
    for answer in state.answers:
        if new.status != "needs_input":
            break
        new = resume(new, answer, deps, on_event=on_event)
    return new
