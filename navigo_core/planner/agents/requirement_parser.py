"""Requirement parser: natural language → ``parsed_request`` (rules; the LLM only when configured).

A request that names no origin starts from the user's home city when their profile keeps one (``deps.user`` in
``deps.store``'s profiles: the first origin they gave an application); the source is ``"profile"`` and the decision
log says it was assumed. Without a user, a profile or a place the home city resolves to, the origin stays open."""

from __future__ import annotations

from typing import Any

from navigo_core.errors import NavigoError
from navigo_core.i18n import detect_lang
from navigo_core.planner.agents._common import entry
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.request import parse_request
from navigo_core.planner.state import PlannerState

NAME = "requirement_parser"


def ready(state: PlannerState) -> bool:
    # waits for the risk guard's input scan: a blocked request is never parsed
    return (state.parsed_request is None and bool(state.natural_language.strip()) and state.scanned_inputs >= 1
            and not state.blocked)


def _filled(req: Any) -> list[str]:
    names = ["origin_text", "destination_text", "start_date", "end_date", "budget", "adults", "children", "interests"]
    return [n for n in names if getattr(req, n, None) not in (None, "", [])]


def _home_origin(req: Any, deps: PlannerDeps) -> Any:
    """The user's kept home city as a place, when the request has no origin and it is not the destination."""
    profiles, user = getattr(deps.store, "profiles", None), deps.user
    if req.origin is not None or req.origin_text or profiles is None or not user:
        return None
    home = str(profiles.kept(user).get("home_city") or "").strip()
    if not home:
        return None
    from navigo_core.providers.places.resolve import resolve_place, same_place

    try:
        place = resolve_place(home, deps.places, role="start")
    except NavigoError:  # ambiguous, unknown or a provider fault: the origin stays open
        return None
    return None if req.destination is not None and same_place(place, req.destination) else place


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    text = state.natural_language
    req = parse_request(text, today=deps.today(), places=deps.places, llm=deps.llm)
    filled = _filled(req)
    sources = getattr(req, "sources", {}) or {}
    notes = list(getattr(req, "notes", []) or [])
    mode = "llm" if any(v == "llm" for v in sources.values()) else "rules"
    if deps.llm is not None and "request.note.llm_failed" in notes:
        mode = "llm_fallback"  # the parser's LLM call failed: the rule extraction stands
    lang = req.lang if req.lang in ("en", "zh") else detect_lang(text)
    home = _home_origin(req, deps)
    if home is not None:
        req = req.model_copy(update={"origin": home, "origin_text": home.display_name(lang),
                                     "sources": {**sources, "origin": "profile"}})
        sources = req.sources
        notes.append(f"assumption: origin {home.display_name('en')}, the user's home city (profile)")
        filled = _filled(req)
    update: dict[str, Any] = {"parsed_request": req, "lang": lang}
    update.update(entry(NAME, deps, input_summary=text, mode=mode,
                        evidence=[f"fields extracted: {len(filled)}", *[f"{k}: {v}" for k, v in sources.items()],
                                  *notes],
                        output_summary=", ".join(filled) or "nothing extracted"))
    return update

