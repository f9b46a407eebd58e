"""Helpers shared by the planner agents: catalogue data, decision-log entries, interests."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar


from navigo_core.i18n import t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import DecisionLogEntry, PlannerState
from navigo_core.safe_yaml import read_yaml

DATA = Path(__file__).resolve().parent.parent / "data"
T = TypeVar("T")


@lru_cache(maxsize=None)
def data(name: str) -> dict[str, Any]:
    return read_yaml(DATA / f"{name}.yaml") or {}


def entry(agent: str, deps: PlannerDeps, *, input_summary: str, output_summary: str,
          evidence: list[str] | None = None, risk_flags: list[str] | None = None, mode: str = "rules") -> dict[str, Any]:
    """The ``decision_log`` part of an agent's update: a list with exactly one new entry."""
    return {"decision_log": [DecisionLogEntry(
        agent=agent, input_summary=input_summary[:500], evidence=[str(e)[:300] for e in (evidence or [])],
        output_summary=output_summary[:500], risk_flags=list(risk_flags or []), mode=mode,  # type: ignore[arg-type]
        timestamp=deps.now_iso(),
    )]}


def required(value: T | None, what: str) -> T:
    """``value``, which the agent's ``ready()`` (or the complete request the form completer made) guarantees;
    a ``ValueError`` naming ``what`` if an agent ever runs without it."""
    if value is None:
        raise ValueError(f"planner agent ran without its input: {what}")
    return value


def canonical_interests(raw: list[str]) -> list[str]:
    """Request interests mapped to catalogue keys (tea, hiking…), in order, without repeats.

    A word the catalogue does not know is kept as typed (the itinerary uses general activities for it).
    """
    synonyms = data("activities")["interests"]
    out: list[str] = []
    for word in raw:
        w = str(word).strip().casefold()
        if not w:
            continue
        exact: str | None = next((k for k, syns in synonyms.items() if w == k or w in syns), None)
        key = exact if exact is not None else next(  # substring match both ways (喝茶和 → tea)
            (k for k, syns in synonyms.items() if any(s in w or (len(w) > 1 and w in s) for s in syns)), w)
        if key not in out:
            out.append(key)
    return out


def known_interest(key: str) -> bool:
    return key in data("activities")["activities"]


def lang_of(state: PlannerState) -> str:
    req = state.user_request or state.parsed_request
    lang = getattr(req, "lang", None) or state.lang
    return lang if lang in ("en", "zh") else "en"


def city_name(state: PlannerState, lang: str) -> str:
    cands = state.destination_candidates or []
    if cands:
        c = cands[0]
        return (c.name_zh if lang == "zh" else "") or c.name
    req = state.user_request
    if req and req.destination is not None:
        return req.destination.display_name(lang)
    return (req.destination_text if req else "") or ""


def travellers(state: PlannerState) -> int:
    req = state.user_request
    if req is None:
        return 1
    return max(1, int(req.adults or 0) + int(req.children or 0))


def money(amount: float, currency: str) -> str:
    return f"{amount:,.2f} {currency}" if abs(amount) < 100 and amount != int(amount) else f"{amount:,.0f} {currency}"


__all__ = ["canonical_interests", "city_name", "data", "entry", "known_interest", "lang_of", "money", "t", "travellers"]
