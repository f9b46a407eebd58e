"""The planner's travel request, read by :mod:`navigo_core.understand`, and the form completer.

* :func:`parse_request` — :func:`navigo_core.understand.parse_request` (rules; with an LLM, the
  model reconciles) turned into a :class:`TravelRequest`.
* :data:`REQUIRED`, :func:`missing_fields`, :func:`apply_defaults`, :func:`questions_for`,
  :func:`apply_answer` — the form completer: ask 1–2 questions about what is missing or
  ambiguous, resume with the answer (:func:`navigo_core.understand.update_request`, with the
  question's field as ``expect``, so a bare answer fills it and a later value replaces an
  earlier one).

The destination is required: a missing, unknown or ambiguous destination is a question whose
quick replies are the candidate places; nothing ever stands in for the place the user named.

``sources`` maps a field to ``"rule" | "llm" | "default" | "user"``; ``notes`` holds i18n
keys (render them with :meth:`TravelRequest.note_messages`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from navigo_core.i18n import t
from navigo_core.providers.places import PlaceProvider
from navigo_core.understand import DEFAULT_CURRENCY, Ambiguity, Money, ParsedRequest
from navigo_core.understand import parse_request as _understand
from navigo_core.understand import update_request

if TYPE_CHECKING:
    from navigo_core.llm import LLMClient

__all__ = [
    "DEFAULT_CURRENCY", "EXPECT", "REQUIRED", "Money", "Question", "TravelRequest", "apply_answer", "apply_defaults",
    "all_questions", "missing_fields", "parse_request", "question_for", "questions_for",
]

REQUIRED = ("destination", "start_date", "end_date", "budget")
MAX_QUESTIONS = 2

#: a question's field → the field :func:`~navigo_core.understand.update_request` expects a bare answer for
EXPECT = {"destination": "destination", "origin": "origin", "start_date": "dates", "dates": "dates",
          "end_date": "days", "days": "days", "budget": "budget", "adults": "travellers", "children": "travellers",
          "travellers": "travellers"}


class Question(BaseModel):
    # "destination", "origin", "start_date" (the dates), "end_date" (trip length), "budget",
    # or the field of an ambiguity ("adults", "children" …)
    field: str
    text: str
    options: list[str] = Field(default_factory=list)  # quick replies; each one parses as an answer


class TravelRequest(ParsedRequest):
    """The planner's typed request: the understand reading (:class:`~navigo_core.understand.ParsedRequest`,
    with its field checks) plus the text the planner was given. JSON-compatible with saved plans: every field
    added since has a default; place words are "" rather than None, as saved plans have them."""

    raw_text: str = ""
    origin_text: str = ""
    destination_text: str = ""

    def note_messages(self, lang: str | None = None) -> list[str]:
        """The notes rendered in ``lang`` (default: the request's language)."""
        params = {"origin": self.origin_text, "destination": self.destination_text,
                  "travellers": self.travellers or 1, "budget": str(self.budget) if self.budget else ""}
        return [t(key, lang or self.lang, **params) for key in self.notes]

    def to_parsed(self) -> ParsedRequest:
        """This request as the conversation state :func:`~navigo_core.understand.update_request` takes."""
        data = self.model_dump(exclude={"raw_text"})
        data.update(text=self.raw_text, origin_text=self.origin_text or None,
                    destination_text=self.destination_text or None)
        return ParsedRequest.model_validate(data)

    @classmethod
    def from_parsed(cls, parsed: ParsedRequest, raw_text: str | None = None) -> TravelRequest:
        data = parsed.model_dump()
        data.update(raw_text=parsed.text if raw_text is None else raw_text, origin_text=parsed.origin_text or "",
                    destination_text=parsed.destination_text or "")
        return cls.model_validate(data)


# --- public API ------------------------------------------------------------------

def parse_request(text: str, *, today: date, places: PlaceProvider | None = None,
                  llm: LLMClient | None = None) -> TravelRequest:
    """A :class:`TravelRequest` from free text (:func:`navigo_core.understand.parse_request`)."""
    return TravelRequest.from_parsed(_understand(text, today=today, places=places, llm=llm), raw_text=text)


def missing_fields(req: TravelRequest) -> list[str]:
    """The :data:`REQUIRED` fields still empty, in that order (an unresolved destination is missing)."""
    return [name for name in REQUIRED if getattr(req, name) is None]


def apply_defaults(req: TravelRequest) -> TravelRequest:
    """A copy with adults=1, children=0, interests=[] where unset (source ``"default"``)."""
    out = req.model_copy(deep=True)
    if out.adults is None:
        out.adults, out.sources["adults"] = 1, "default"
    if out.children is None:
        out.children, out.sources["children"] = 0, "default"
    if not out.interests and "interests" not in out.sources:
        out.interests, out.sources["interests"] = [], "default"
    return out


_BUDGET_OPTIONS = {"CNY": ("3000元", "6000元", "10000元"), "USD": ("$1,000", "$3,000", "$5,000"),
                   "EUR": ("€1,000", "€3,000", "€5,000")}
_LENGTH_OPTIONS = {"zh": ["2天", "3天", "5天", "一周"], "en": ["2 days", "3 days", "5 days", "a week"]}
_DATE_OPTIONS = {"zh": ["这个周末", "下周五出发玩3天", "下周一出发玩一周"],
                 "en": ["this weekend", "next Friday for 3 days", "next Monday for a week"]}


def _lang(lang: str | None, req: TravelRequest) -> str:
    lang = lang or req.lang
    return lang if lang in ("en", "zh") else "en"


def _ambiguity_question(amb: Ambiguity, lang: str, field: str | None = None) -> Question:
    a, b = (amb.candidates + ["", ""])[:2]
    label = t(f"request.field.{amb.field}", lang)
    return Question(field=field or amb.field, text=t(amb.reason or "understand.amb.place_unknown", lang,
                                                     **{"text": amb.text, "field": label, "a": a, "b": b,
                                                        **amb.params}),
                    options=list(amb.candidates))


def question_for(req: TravelRequest, field: str, lang: str | None = None) -> Question | None:
    """The question about one field ("destination", "origin", "dates", "budget" …), or None when it is settled."""
    lang = _lang(lang, req)
    if field in ("destination", "origin"):
        amb = req.ambiguity(field)
        if amb is not None:
            return _ambiguity_question(amb, lang)
        if getattr(req, field) is not None or field == "origin":
            return None
        if req.destination_text:  # named, not found, nothing close
            return Question(field=field, text=t("understand.amb.place_unknown", lang, text=req.destination_text))
        return Question(field=field, text=t("request.q.destination", lang))
    if field in ("dates", "start_date", "end_date"):
        amb = req.ambiguity("dates")
        if amb is not None and (req.start_date is None or amb.reason == "understand.amb.conflict" or amb.is_limit):
            return _ambiguity_question(amb, lang, field="start_date")
        if req.start_date is None:
            dest = (req.destination.display_name(lang) if req.destination else req.destination_text) or ""
            where = t("request.q.where", lang, destination=dest) if dest else ""
            return Question(field="start_date", text=t("request.q.dates", lang, where=where),
                            options=list(_DATE_OPTIONS[lang]))
        if req.end_date is None:
            return Question(field="end_date", text=t("request.q.length", lang, start=req.start_date.isoformat()),
                            options=list(_LENGTH_OPTIONS[lang]))
        return None
    if field == "budget":
        amb = req.ambiguity("budget")
        if amb is not None:
            return _ambiguity_question(amb, lang)
        if req.budget is not None:
            return None
        travellers = req.travellers
        key = "request.q.budget_group" if travellers and travellers > 1 else "request.q.budget"
        return Question(field="budget", text=t(key, lang, travellers=travellers or 1),
                        options=list(_BUDGET_OPTIONS[DEFAULT_CURRENCY[lang]]))
    amb = req.ambiguity(field)
    return _ambiguity_question(amb, lang) if amb is not None else None


def all_questions(req: TravelRequest, lang: str | None = None) -> list[Question]:
    """Every open question, most important first: destination, origin, dates, budget, then other ambiguities."""
    out = [q for f in ("destination", "origin", "dates", "budget") if (q := question_for(req, f, lang)) is not None]
    for amb in req.ambiguities:
        if amb.field not in ("destination", "origin", "dates", "budget"):
            out.append(_ambiguity_question(amb, _lang(lang, req)))
    return out


def questions_for(req: TravelRequest, lang: str | None = None) -> list[Question]:
    """1–2 questions about the missing or ambiguous fields (``[]`` when nothing is left to ask)."""
    return all_questions(req, lang)[:MAX_QUESTIONS]


def _expects(expect: str | Sequence[str] | None, req: TravelRequest) -> list[str]:
    if isinstance(expect, str):
        expect = [expect]
    if expect is None:
        expect = [q.field for q in questions_for(req)]
    return list(dict.fromkeys(EXPECT.get(e, e) for e in expect))


_FILLED = {"destination": ("destination",), "origin": ("origin",), "dates": ("start_date", "end_date"),
           "days": ("end_date", "days"), "travellers": ("adults", "children"), "budget": ("budget",)}


def _fills(before: ParsedRequest, after: ParsedRequest, expect: str) -> bool:
    return any(getattr(after, f) is not None and getattr(after, f) != getattr(before, f)
               for f in _FILLED.get(expect, ()))


def apply_answer(req: TravelRequest, answer_text: str, *, today: date, places: PlaceProvider | None = None,
                 llm: LLMClient | None = None, expect: str | Sequence[str] | None = None) -> TravelRequest:
    """``req`` updated with the user's next message (:func:`navigo_core.understand.update_request`).

    ``expect``: the field(s) just asked (question fields or understand names; default: the
    questions :func:`questions_for` would ask), so a bare answer ("6000", "3", "Hangzhou") fills
    the first of them it can fill. Later explicit values replace earlier or vague ones. A quick
    reply of a place question picks that candidate.
    """
    previous = req.to_parsed()
    expects = _expects(expect, req)
    out = None
    if llm is None and len(expects) > 1:
        for e in expects:
            trial = update_request(previous, answer_text, today=today, places=places, expect=e)
            if _fills(previous, trial, e):
                out = trial
                break
    if out is None:
        out = update_request(previous, answer_text, today=today, places=places, expect=expects[0] if expects else None,
                             llm=llm)
    return TravelRequest.from_parsed(out, raw_text=f"{req.raw_text}\n{answer_text}".strip())
