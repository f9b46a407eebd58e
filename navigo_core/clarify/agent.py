"""The clarification agent: LLM mode (streamed, ``[INTENT_READY]`` summary) and offline mode (slot filling).

Both modes keep one request across the turns, read by :mod:`navigo_core.understand`
(:func:`parse_request` on the first message, :func:`apply_answer` — ``update_request`` with the
fields asked last as ``expect`` — on the next ones: later values replace earlier or vague ones,
corrections work, one answer may fill several fields), so the offline summary, the quick
replies and the Plan page's ``request_text`` are always available. An ambiguous or unknown
destination is asked about with the candidate places as quick replies; a month or season is
asked about with its dates. Neither mode mutates the state it is given: each returns a new
:class:`ClarifyState`.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterator
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from navigo_core.clarify.checks import reply_problems, summary_problems
from navigo_core.clarify.models import ClarifyState, HistoryTurn, Mode, Summary, Turn
from navigo_core.clarify.parsing import block_start, held_back, parse_reply
from navigo_core.config import Settings
from navigo_core.errors import LLMError, describe_failure
from navigo_core.understand.checks import has_question
from navigo_core.i18n import detect_lang, t
from navigo_core.i18n.markdown import question_list
from navigo_core.planner.form import request_text as form_request_text
from navigo_core.planner.request import DEFAULT_CURRENCY, TravelRequest, apply_answer, parse_request, question_for
from navigo_core.providers.selection import Providers, make_providers
from navigo_core.understand import interest_label

log = logging.getLogger(__name__)

PROMPT_FILE = Path(__file__).parent / "data" / "prompt.md"
ASK_ORDER = ("destination", "dates", "travellers", "budget")

_TRAVELLER_OPTIONS = {"en": ["just me", "2 adults", "2 adults and 1 child", "4 adults"],
                      "zh": ["1个人", "2个大人", "2个大人1个小孩", "4个人"]}
_BUDGET_OPTIONS = {"en": ["$1,000", "$3,000", "$5,000"], "zh": ["3000元", "6000元", "10000元"]}
_LENGTH_OPTIONS = {"en": ["2 days", "3 days", "5 days", "a week"], "zh": ["2天", "3天", "5天", "一周"]}
_DATE_OPTIONS = {"en": ["this weekend", "next Friday for 3 days", "next Monday for a week"],
                 "zh": ["这个周末", "下周五出发玩3天", "下周一出发玩一周"]}

_STOP_EN = re.compile(
    r"^(?:(?:ok(?:ay)?|fine|yes|alright)[,. ]*)?(?:that'?s enough|thats enough|enough|just start|go ahead|"
    r"start (?:now|planning)|stop asking|that'?s all|no more questions)(?: please| now)?[.! ]*$", re.IGNORECASE)
_STOP_ZH = re.compile(r"^(?:好的?|嗯|行|那)?[，, ]*(?:可以了|直接开始|就这样|够了|开始吧|不用问了|就这些)(?:吧|了|啊)?[。！!~ ]*$")
_QR_RULES = (  # keyword in the model's question -> quick replies
    (re.compile(r"budget|预算|花费|多少钱", re.IGNORECASE), _BUDGET_OPTIONS),
    (re.compile(r"how many (?:days|nights)|how long|几天|多久|多长时间", re.IGNORECASE), _LENGTH_OPTIONS),
    (re.compile(r"how many (?:people|travell?ers|adults|of you|persons)|who is travell?ing|几个人|几位|几人|多少人",
                re.IGNORECASE), _TRAVELLER_OPTIONS),
    (re.compile(r"\bwhen\b|dates?\b|什么时候|哪天|日期|出发时间", re.IGNORECASE), _DATE_OPTIONS),
)


def is_stop(text: str) -> bool:
    """The user asks to end the questions ("that's enough", "just start", "可以了", "直接开始", "就这样")."""
    s = unicodedata.normalize("NFKC", text or "").strip().replace("’", "'")
    return bool(_STOP_EN.match(s) or _STOP_ZH.match(s))


@lru_cache(maxsize=1)
def _prompt_template() -> str:
    return PROMPT_FILE.read_text(encoding="utf-8")


def system_prompt(lang: str, *, today: date, round_no: int, max_rounds: int) -> str:
    return _prompt_template().format(lang_name="Chinese" if lang == "zh" else "English", today=today.isoformat(),
                                     round=round_no, max_rounds=max_rounds)


FINAL_ROUND = ("This is the last round: do not ask anything more. Summarise now and end the reply with "
               "[INTENT_READY] and the JSON block, listing as assumptions whatever is still unclear.")
COMPLETE_ROUND = ("Everything needed is known now: do not ask anything more. Summarise in one sentence and end "
                  "the reply with [INTENT_READY] and the JSON block.")
GATE_CHARS = 24  # visible characters of a streamed reply held back until its language and person are checked


# --- slots --------------------------------------------------------------------------

def _req(state: ClarifyState) -> TravelRequest | None:
    return TravelRequest.model_validate(state.slots) if state.slots else None


def _missing(req: TravelRequest | None) -> list[str]:
    """The fields still to ask, in :data:`ASK_ORDER` (an unresolved destination is still to ask)."""
    if req is None:
        return list(ASK_ORDER)
    out = []
    if req.destination is None or req.ambiguity("destination") is not None:
        out.append("destination")
    if req.start_date is None or req.end_date is None or req.ambiguity("dates") is not None:
        out.append("dates")
    if req.adults is None:
        out.append("travellers")
    if req.budget is None:
        out.append("budget")
    return out


def update_slots(req: TravelRequest | None, text: str, *, asked: list[str], today: date, places: Any,
                 llm: Any = None) -> TravelRequest:
    """The slots after the user's message: parsed (first message), else updated with it, a bare answer
    filling the field asked last ("Hangzhou", "2", "杭州")."""
    if req is None:
        return parse_request(text, today=today, places=places, llm=llm)
    return apply_answer(req, text, today=today, places=places, llm=llm, expect=list(asked))


def _days(req: TravelRequest) -> int:
    return (req.end_date - req.start_date).days + 1 if req.start_date and req.end_date else 0


def offline_summary(req: TravelRequest | None, lang: str) -> Summary:
    """Objective, the constraints the user stated and the assumptions (defaults, open fields)."""
    req = req or TravelRequest(raw_text="", lang=lang)
    origin = (req.origin.display_name(lang) if req.origin else "") or req.origin_text
    dest = (req.destination.display_name(lang) if req.destination else "") or req.destination_text
    if origin and dest:
        objective = t("clarify.objective.from_to", lang, origin=origin, destination=dest)
    elif dest:
        objective = t("clarify.objective.to", lang, destination=dest)
    else:
        objective = t("clarify.objective.any", lang)
    constraints: list[str] = []
    assumptions: list[str] = []
    if req.start_date and req.end_date:
        constraints.append(t("clarify.c.dates", lang, start=req.start_date.isoformat(), end=req.end_date.isoformat(),
                             days=_days(req)))
    elif req.start_date:
        constraints.append(t("clarify.c.start", lang, start=req.start_date.isoformat()))
        assumptions.append(t("clarify.a.no_length", lang))
    else:
        assumptions.append(t("clarify.a.no_dates", lang))
    if req.adults is not None:
        constraints.append(t("clarify.c.adults", lang, adults=req.adults))
    else:
        assumptions.append(t("clarify.a.adults", lang))
    if req.children:
        constraints.append(t("clarify.c.children", lang, children=req.children))
    elif req.children is None or req.sources.get("children") == "default":
        assumptions.append(t("clarify.a.children", lang))
    if req.budget is not None:
        constraints.append(t("clarify.c.budget", lang, budget=str(req.budget)))
        if "request.note.currency_assumed" in req.notes:
            assumptions.append(t("clarify.a.currency", lang, currency=req.budget.currency))
    else:
        assumptions.append(t("clarify.a.no_budget", lang))
    if req.interests:
        names = ("、" if lang == "zh" else ", ").join(interest_label(i, lang) for i in req.interests)
        constraints.append(t("clarify.c.interests", lang, interests=names))
    if not dest:
        assumptions.append(t("clarify.a.no_destination", lang))
    return Summary(objective=objective, constraints=constraints, assumptions=assumptions)


def _so_far(req: TravelRequest | None, lang: str) -> list[str]:
    """What is understood so far, so a misreading shows at once ("So far: Kyoto; dates 2026-12-04 to …")."""
    if req is None:
        return []
    summary = offline_summary(req, lang)
    items = list(summary.constraints)
    dest = (req.destination.display_name(lang) if req.destination else "")
    origin = (req.origin.display_name(lang) if req.origin else "")
    if dest:
        items.insert(0, f"{origin} → {dest}" if origin else dest)
    if not items:
        return []
    text = t("clarify.so_far", lang, items=("；" if lang == "zh" else "; ").join(items))
    if req.vague and req.start_date:
        text += " " + t("clarify.so_far.vague", lang)
    return [text]


def summary_text(summary: Summary, lang: str, *, limited: bool = False) -> str:
    """The summary as the user reads it."""
    lines = [t("clarify.done.limited" if limited else "clarify.done.intro", lang), "", f"📋 {summary.objective}"]
    lines += [f"- ✅ {c}" for c in summary.constraints]
    if summary.assumptions:
        lines += ["", t("clarify.done.assumptions", lang)]
        lines += [f"- {a}" for a in summary.assumptions]
    return "\n".join(lines)


def request_text(req: TravelRequest | dict[str, Any] | None, lang: str, summary: Summary | None = None) -> str:
    """A request the planner's ``parse_request`` reads back (origin, destination, dates, travellers, budget,
    interests), written by the same helper as the Plan page's form; falls back to the summary's objective
    and constraints when the slots are empty."""
    if isinstance(req, dict):
        req = TravelRequest.model_validate(req) if req else None
    if req is None or not (req.destination_text or req.start_date or req.budget):
        if summary is None:
            return ""
        return "; ".join([summary.objective, *summary.constraints])
    return form_request_text(
        origin=req.origin_text or "", destination=req.destination_text or "", start=req.start_date,
        end=req.end_date, budget=req.budget.amount if req.budget else None,
        currency=req.budget.currency if req.budget else "", adults=req.adults or 1, children=req.children or 0,
        interests=req.interests, lang=lang,
    )


def quick_replies_for(text: str, lang: str) -> list[str]:
    """Predictable answers to the question(s) in ``text`` (budget ranges, trip lengths, traveller counts …)."""
    lang = lang if lang in ("en", "zh") else "en"
    out: list[str] = []
    for rx, options in _QR_RULES:
        if rx.search(text or ""):
            out += options[lang]
        if len(out) >= 6:
            break
    return out[:8]


# --- the stream wrapper -----------------------------------------------------------------

class ClarifyStream:
    """An LLM turn: iterate for the text deltas (for ``st.write_stream``); then ``.turn`` and ``.state``.

    LLM errors never escape: the turn becomes ``error`` (``.partial`` keeps the text already
    streamed) and ``.state`` is the state as it was, so the same message can be retried.
    """

    def __init__(self, agent: ClarifyAgent, state: ClarifyState, user_text: str) -> None:
        self._agent = agent
        self._state = state
        self._text = user_text
        self._turn: Turn | None = None
        self._new_state: ClarifyState | None = None
        self._started = False
        self.partial = ""  # what was streamed so far

    @property
    def done(self) -> bool:
        return self._turn is not None

    @property
    def turn(self) -> Turn:
        if self._turn is None:
            raise RuntimeError("ClarifyStream.turn is available after the stream is exhausted")
        return self._turn

    @property
    def state(self) -> ClarifyState:
        if self._new_state is None:
            raise RuntimeError("ClarifyStream.state is available after the stream is exhausted")
        return self._new_state

    def __iter__(self) -> Iterator[str]:
        if self._started:
            raise RuntimeError("a ClarifyStream can be iterated only once")
        self._started = True
        yield from self._run()

    def _run(self) -> Iterator[str]:
        agent, state, text = self._agent, self._state, self._text
        lang = state.lang
        round_no = state.rounds + 1
        stop = is_stop(text)
        final = stop or round_no >= agent.max_rounds
        req = _req(state)
        if not stop:
            req = update_slots(req, text, asked=state.asked, today=agent.today, places=agent.places)
        complete = not _missing(req)  # the facts end the dialogue, whatever the model writes
        messages = [{"role": "system", "content": system_prompt(lang, today=agent.today, round_no=round_no,
                                                                max_rounds=agent.max_rounds)}]
        messages += [{"role": h.role, "content": h.content} for h in state.history]
        messages.append({"role": "user", "content": text})
        if final or complete:
            messages.append({"role": "system", "content": FINAL_ROUND if final else COMPLETE_ROUND})
        checks: list[str] = []
        full = ""
        emitted = 0
        gate_open = False  # the first words are held back until their language and person are checked
        rejected = False  # the model's visible text failed those checks: none of it is shown
        try:
            for delta in agent.llm.stream(messages):
                full += delta
                if rejected:
                    continue
                cut = block_start(full)
                upto = cut if cut >= 0 else len(full) - held_back(full)
                if not gate_open:
                    head = full[:upto]
                    if len(head.strip()) < GATE_CHARS and cut < 0:
                        continue
                    problems = reply_problems(head, lang, asking=False) if head.strip() else []
                    if problems:
                        rejected = True
                        checks += [f"reply:{p}" for p in problems]
                        continue
                    gate_open = True
                if upto > emitted:
                    piece = full[emitted:upto]
                    emitted = upto
                    self.partial += piece
                    yield piece
        except LLMError as exc:
            log.warning("clarification stream failed: %s", exc)
            cut = block_start(full)
            head = full[:cut if cut >= 0 else len(full)].rstrip()
            if not gate_open and not rejected and head.strip() and not reply_problems(head, lang, asking=False):
                self.partial += head  # the words held back for the check: they are the partial answer
                yield head
            self._turn = Turn(status="error", content=self.partial, error=exc.message(lang),
                              checks=[*checks, f"llm_failed:{describe_failure(exc)}"])
            self._new_state = state
            return
        turn = agent.decide(state, text, req, full, checks=checks, rejected=rejected, final=final,
                            complete=complete)
        streamed = self.partial.rstrip()
        if turn.content.startswith(streamed):
            extra = turn.content[len(streamed):]
        else:  # the model's text was replaced: what was shown is followed by the replacement
            extra = ("\n\n" if streamed else "") + turn.content
        if extra.strip():
            self.partial += extra
            yield extra
        self._turn = turn
        self._new_state = _advance(state, text, turn, req, asked=_missing(req) if turn.status == "asking" else [])


def _advance(state: ClarifyState, text: str, turn: Turn, req: TravelRequest | None, *, asked: list[str]) -> ClarifyState:
    new = state.model_copy(deep=True)
    new.rounds += 1
    new.history += [HistoryTurn(role="user", content=text), HistoryTurn(role="assistant", content=turn.content)]
    new.status = turn.status
    new.summary = turn.summary
    new.asked = asked
    if req is not None:
        new.slots = req.model_dump(mode="json")
    return new


# --- the agent ------------------------------------------------------------------------

class ClarifyAgent:
    """``settings``: the caller's Settings (required; the agent never reads the global settings). ``llm`` None:
    offline mode only. ``places``: a PlaceProvider (default: the one of ``providers``, the composition root's
    bundle; None: ``make_providers(settings)``, see :mod:`navigo_core.providers.selection`)."""

    def __init__(self, settings: Settings, *, llm: Any = None, places: Any = None, today: date | None = None,
                 max_rounds: int | None = None, providers: Providers | None = None) -> None:
        if places is None:
            places = (providers if providers is not None else make_providers(settings)).places
        self.settings = settings
        self.llm = llm
        self.places = places
        self._today = today
        self.max_rounds = max_rounds or int(getattr(settings, "clarify_max_rounds", 5))

    @property
    def today(self) -> date:
        return self._today or date.today()

    def start(self, thread_id: str = "", text: str = "", *, lang: str | None = None,
              mode: Mode | None = None) -> ClarifyState:
        """A new state (mode ``llm`` when an LLM is configured, else ``offline``)."""
        default = getattr(self.settings, "default_language", "en")
        return ClarifyState(thread_id=thread_id, lang=lang or detect_lang(text, default=default),
                            mode=mode or ("llm" if self.llm is not None else "offline"))

    def turn(self, state: ClarifyState, user_text: str) -> tuple[Turn, ClarifyState]:
        """One turn in the state's mode (LLM turns are consumed without streaming)."""
        if state.mode == "llm" and self.llm is not None:
            stream = self.stream_turn(state, user_text)
            for _ in stream:
                pass
            return stream.turn, stream.state
        return self.offline_turn(state, user_text)

    def stream_turn(self, state: ClarifyState, user_text: str, llm: Any = None) -> ClarifyStream:
        """An LLM turn to iterate (text deltas); ``.turn`` / ``.state`` after exhaustion."""
        if llm is not None:
            self.llm = llm
        if self.llm is None:
            raise ValueError("stream_turn needs an LLM client; use offline_turn without one")
        return ClarifyStream(self, state, user_text)

    def offline_turn(self, state: ClarifyState, user_text: str) -> tuple[Turn, ClarifyState]:
        """Slot filling: 1–2 questions about what is missing, or ``done`` with the summary."""
        lang = state.lang
        stop = is_stop(user_text)
        req = _req(state)
        if not stop:
            req = update_slots(req, user_text, asked=state.asked, today=self.today, places=self.places)
        missing = _missing(req)
        round_no = state.rounds + 1
        if not missing:
            summary = offline_summary(req, lang)
            turn = Turn(status="done", content=summary_text(summary, lang), summary=summary)
            return turn, _advance(state, user_text, turn, req, asked=[])
        if stop or round_no >= self.max_rounds:
            summary = offline_summary(req, lang)
            turn = Turn(status="done", content=summary_text(summary, lang, limited=True), summary=summary)
            return turn, _advance(state, user_text, turn, req, asked=[])
        content, quick, asked = self.ask(state, req)
        turn = Turn(status="asking", content=content, quick_replies=quick)
        return turn, _advance(state, user_text, turn, req, asked=asked)

    def _questions(self, req: TravelRequest | None, asked: list[str], lang: str) -> tuple[list[str], list[str]]:
        lang = lang if lang in ("en", "zh") else "en"
        req = req or TravelRequest(raw_text="", lang=lang)
        texts: list[str] = []
        quick: list[str] = []
        for name in asked:
            if name == "travellers":
                texts.append(t("clarify.q.travellers", lang))
                quick += _TRAVELLER_OPTIONS[lang]
                continue
            q = question_for(req, name, lang)
            if name == "destination" and (q is None or (not q.options and not req.destination_text)):
                texts.append(t("clarify.q.destination_only" if req.origin_text else "clarify.q.destination", lang))
            elif q is not None:
                texts.append(q.text)
                quick += q.options
            elif name == "dates":
                texts.append(t("clarify.q.dates", lang))
                quick += _DATE_OPTIONS[lang]
            elif name == "budget":
                texts.append(t("clarify.q.budget", lang))
                quick += _BUDGET_OPTIONS[lang]
        return texts, quick

    def decide(self, state: ClarifyState, text: str, req: TravelRequest | None, reply: str, *, checks: list[str],
               rejected: bool, final: bool, complete: bool) -> Turn:
        """The turn for the model's whole ``reply``, every part checked before it is used.

        A summary (after one repair of a block that has content) must pass :func:`summary_problems`;
        else, when the dialogue ends (last round, a stop phrase, or every field known), the
        deterministic summary of the state is used. A question must be in the user's language, speak to
        the user and ask something; a reply without a question gets the offline questions added, a reply
        that fails the other checks is replaced by the offline turn.
        """
        lang = state.lang
        checks = list(checks)
        parsed = parse_reply(reply)
        content = "" if rejected else parsed.content
        user_texts = [h.content for h in state.history if h.role == "user"] + [text]
        summary = parsed.summary
        if parsed.ready and summary is None:
            if "{" in parsed.raw:
                summary = self.repair(parsed.raw, parsed.error)
                checks.append("summary:repaired" if summary is not None else "summary:repair_failed")
            else:  # "[INTENT_READY]" and nothing: no repair turn quoting an empty block
                checks.append("summary:empty_block")
        if summary is not None:
            problems = summary_problems(summary, req, lang, user_texts, error=parsed.error)
            if problems:
                checks += [f"summary:{p}" for p in problems]
                summary = None
            else:
                checks.append("summary:model")
        if content:
            problems = reply_problems(content, lang, asking=False)
            if problems:
                checks += [f"reply:{p}" for p in problems]
                content = ""
        if summary is not None:
            if content and has_question(content, lang):
                content = ""  # a summary that still asks: the summary alone
            return Turn(status="done", content=content or summary_text(summary, lang), summary=summary, checks=checks)
        if final or complete:
            summary = offline_summary(req, lang)
            checks.append("summary:deterministic")
            return Turn(status="done", content=summary_text(summary, lang, limited=not complete), summary=summary,
                        checks=checks)
        places = req.ambiguity("destination") if req is not None else None  # the candidates first
        if content and has_question(content, lang):
            quick = [*(places.candidates if places else []), *quick_replies_for(content, lang)]
            return Turn(status="asking", content=content, quick_replies=list(dict.fromkeys(quick))[:10], checks=checks)
        offline, quick, _asked = self.ask(state, req)
        if content:
            checks.append("reply:no_question")
            questions = question_list(self._questions(req, _missing(req)[:2], lang)[0])
            return Turn(status="asking", content=f"{content}\n\n{questions}".strip(), quick_replies=quick, checks=checks)
        checks.append("reply:offline")
        return Turn(status="asking", content=offline, quick_replies=quick, checks=checks)

    def ask(self, state: ClarifyState, req: TravelRequest | None) -> tuple[str, list[str], list[str]]:
        """The offline asking turn: (content, quick replies, fields asked)."""
        lang = state.lang
        asked = _missing(req)[:2]
        texts, quick = self._questions(req, asked, lang)
        lead = t("clarify.intro", lang) if state.rounds == 0 else t("clarify.noted", lang)
        # what is known as one paragraph, then the questions one per line (a numbered list when several)
        intro = ("" if lang == "zh" else " ").join([lead, *_so_far(req, lang)])
        return (f"{intro}\n\n{question_list(texts)}" if texts else intro), quick, asked

    def repair(self, raw: str, error: str) -> Summary | None:
        """One repair request for an invalid summary block (None when that fails too)."""
        if self.llm is None:
            return None
        messages = [
            {"role": "system", "content": "You fix malformed JSON. Return only the corrected summary object with the "
                                          "keys objective (string), constraints (list of strings) and assumptions "
                                          "(list of strings), keeping the original wording."},
            {"role": "user", "content": f"This summary block is not valid ({error}):\n\n{raw}"},
        ]
        try:
            return self.llm.structured(messages, Summary)
        except LLMError as exc:
            log.warning("summary repair failed: %s", exc)
            return None
        except Exception as exc:  # a bad reply must never crash the chat
            log.warning("summary repair failed: %s: %s", type(exc).__name__, exc)
            return None


__all__ = ["ASK_ORDER", "DEFAULT_CURRENCY", "ClarifyAgent", "ClarifyStream", "is_stop", "offline_summary",
           "quick_replies_for", "request_text", "summary_text", "system_prompt", "update_slots"]
