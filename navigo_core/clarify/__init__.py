"""The trip clarification ("roundtable intent"): a few short questions, then a summary.

* :class:`ClarifyAgent` — ``start(thread_id, lang)``, ``offline_turn(state, text)`` (slot filling
  with the planner's rules), ``stream_turn(state, text)`` (LLM mode: a :class:`ClarifyStream` to
  iterate for text deltas; ``.turn`` and ``.state`` after exhaustion) and ``turn(state, text)``.
* :class:`ClarifyState`, :class:`Turn`, :class:`Summary` — the models (:mod:`.models`).
* :func:`parse_reply` — the ``[INTENT_READY]`` block parser (:mod:`.parsing`).

A turn is ``asking`` (with quick replies), ``done`` (with the summary) or ``error`` (an LLM
failure: the state is unchanged so the user can retry or continue offline). The clarification
ends after ``settings.clarify_max_rounds`` rounds, or when the user says "that's enough",
"可以了" …, with the assumptions listed.
"""

from navigo_core.clarify.agent import ClarifyAgent, ClarifyStream, is_stop, request_text
from navigo_core.clarify.models import ClarifyState, HistoryTurn, Summary, Turn
from navigo_core.clarify.parsing import MARKER, ParsedReply, parse_reply

__all__ = [
    "MARKER", "ClarifyAgent", "ClarifyState", "ClarifyStream", "HistoryTurn", "ParsedReply", "Summary", "Turn",
    "is_stop", "parse_reply", "request_text",
]
