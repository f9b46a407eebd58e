"""Checks on the model's clarification turns before they are used (:mod:`navigo_core.understand.checks`).

* :func:`reply_problems` — a reply must be in the user's language, speak to the user (no "The user
  wants…" narration) and, when it asks, contain a question.
* :func:`summary_problems` — a summary must be in the user's language, must not echo a parser error,
  must keep every place, date and number of the understood request and add no place (nor another
  proper name) that neither the request nor the user's messages have.

Each returns short codes (``language``, ``narration``, ``no_question``, ``missing:date:2026-05-05``,
``new_place:Beijing`` …); empty means usable. The agent records them in ``Turn.checks`` and uses its
deterministic text instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from navigo_core.clarify.models import Summary
from navigo_core.planner.request import TravelRequest
from navigo_core.understand.checks import (
    Facts,
    has_question,
    is_narration,
    language_ok,
    missing_facts,
    new_names,
    new_places,
    place_names,
)

__all__ = ["facts_of", "reply_problems", "summary_problems", "summary_text_of"]

_ERROR_ECHO = re.compile(r"\b(?:invalid|not valid|json|schema|validation|malformed|syntax error|expecting)\b|"
                         r"无效|格式错误|解析", re.IGNORECASE)


def reply_problems(text: str, lang: str, *, asking: bool) -> list[str]:
    """Why a visible reply cannot be shown as it is ([] when it can)."""
    out = []
    if not language_ok(text, lang):
        out.append("language")
    if is_narration(text):
        out.append("narration")
    if asking and not has_question(text, lang):
        out.append("no_question")
    return out


def facts_of(req: TravelRequest | None) -> Facts:
    """The places, dates and numbers a summary of ``req`` must keep (defaults are not facts)."""
    facts = Facts()
    if req is None:
        return facts
    for place, text in ((req.destination, req.destination_text), (req.origin, req.origin_text)):
        names = place_names(place, text)
        if names:
            facts.places.append(names)
    if req.start_date is not None:
        facts.dates.append(req.start_date)
        if req.end_date is not None and req.end_date != req.start_date:
            facts.dates.append(req.end_date)
    sources = req.sources or {}
    if req.adults is not None and sources.get("adults") != "default":
        facts.numbers.append(float(req.adults))
    if req.children and sources.get("children") != "default":
        facts.numbers.append(float(req.children))
    if req.budget is not None:
        facts.numbers.append(float(req.budget.amount))
    return facts


def _allowed(req: TravelRequest | None, user_texts: Iterable[str]) -> list[str]:
    out = list(user_texts)
    if req is not None:
        for place in (req.destination, req.origin):
            if place is not None:
                out += [place.name, place.name_zh, place.admin, place.admin_zh, place.country_name,
                        place.country_name_zh]
        out += [req.destination_text or "", req.origin_text or ""]
        if req.budget is not None:
            out.append(req.budget.currency)
    return [x for x in out if x]


def summary_text_of(summary: Summary) -> str:
    return "\n".join([summary.objective, *summary.constraints, *summary.assumptions])


def summary_problems(summary: Summary, req: TravelRequest | None, lang: str, user_texts: Iterable[str],
                     *, error: str = "") -> list[str]:
    """Why the model's ``summary`` cannot replace the deterministic one ([] when it can)."""
    text = summary_text_of(summary)
    out: list[str] = []
    if not language_ok(text, lang):
        out.append("language")
    if _ERROR_ECHO.search(text) or (error and error[:40] in text):
        out.append("error_echo")
    out += [f"missing:{m}" for m in missing_facts(text, facts_of(req))]
    allowed = _allowed(req, user_texts)
    out += [f"new_place:{p}" for p in new_places(text, allowed)]
    out += [f"new_name:{n}" for n in new_names(text, allowed) if not any(n in p for p in out)]
    return out
