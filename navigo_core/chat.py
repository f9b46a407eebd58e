"""The chat service the Chat page calls (no streamlit here).

Per message, in this order: (1) the user message is persisted before anything runs; (2) the
risk guard (:func:`~navigo_core.security.scan_input`) — a flagged message gets a safe refusal
(persisted); (3) the gate: an active clarification in the thread is continued; otherwise
:func:`~navigo_core.scenes.handle_message` runs with the thread's ``active_flow``, and a
trip-planning decision starts the clarification agent with this message (the trip scene is the
entry; the clarification takes over the dialogue); other scenes reply with their text; (4) the
reply is persisted when it finishes — for a stream, after it is exhausted (a stream that raises
leaves its partial text with status ``error`` and re-raises as :class:`ChatError`).

Thread state (``store.threads.get_state``): ``{"clarify": ClarifyState | None, "active_flow": ActiveFlow | None,
"subject": {...}}``. The subject is what the conversation is about so far: ``application`` (the number drafted or
named) and ``grade`` (the employee grade the traveller gave: stated in any message — "我是经理级", "I'm a
director" — or answered to the policy chat's question, or handed back by a scene in ``payload["subject"]``).
Scenes read it from ``GateContext.subject``; the hand-offs to the pages carry it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from navigo_core.clarify import ClarifyAgent, ClarifyState, ClarifyStream, Turn, request_text
from navigo_core.errors import NavigoError
from navigo_core.i18n import detect_lang, t
from navigo_core.intent.rules import default_rules
from navigo_core.config import Settings
from navigo_core.limits import Limits, check_message
from navigo_core.providers.selection import Providers, make_providers
from navigo_core.scenes import ActiveFlow, GateContext, GateDecision, gate_classify, run_scene
from navigo_core.security import scan_input

log = logging.getLogger(__name__)

TRIP_SCENE = "trip_planning"
TRIP_FLOW = "trip_plan"  # the trip scene's flow: an open clarification stands for it at the gate


class ChatError(NavigoError):
    """The chat could not answer (the user message stays saved)."""

    default_code = "chat.failed"


@dataclass
class ChatReply:
    """What :meth:`ChatService.send` returns.

    Either ``text`` is set, or ``stream`` (an iterable of text deltas for ``st.write_stream``);
    for a stream, ``text``, ``status``, ``summary``, ``quick_replies``, ``handoff`` and
    ``message_id`` are filled in once it is exhausted.
    ``status``: asking | done | error | reply | refused.
    ``decision``: ``{"step", "scene", "intent", "confidence", "latency_ms", "reason"}`` (None for refusals).
    ``handoff``: ``{"kind": "plan", "summary", "request_text"}`` when a clarification is done,
    ``{"kind": "route", "route_request"}`` from the route scene, or ``{"kind": "reimbursement", "grade",
    "application"}`` from the reimbursement scene (the grade the traveller gave, None when none was).
    """

    status: str
    text: str = ""
    stream: Any = None
    decision: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    quick_replies: list[str] = field(default_factory=list)
    handoff: dict[str, Any] | None = None
    message_id: int | None = None
    error: str | None = None
    lang: str = "en"


def decided_by(decision: GateDecision) -> str:
    """Who decided, for the caption: ``rule``, ``seeds`` (the L2 example sentences), ``llm`` (only when
    an LLM answered), ``dialogue`` (an open dialogue continued), ``off_topic``, ``guess`` (no layer was
    sure; the L2 layer's best business-travel guess took it), or ``none`` (no layer was sure: the model
    route or the fallback help took it)."""
    step, intent = decision.step, decision.intent
    if step == "resume":
        return "dialogue"
    if step == "intent" and decision.detail.startswith("guess "):
        return "guess"
    if step in ("off_topic", "rule"):
        return step
    if step == "intent" and intent is not None:
        if intent.source == "llm" and intent.decided:
            return "llm"
        return {"vector": "seeds", "rule": "rule"}.get(intent.source, "none")
    return "none"


def decision_info(decision: GateDecision | None) -> dict[str, Any] | None:
    """The caption data of a gate decision."""
    if decision is None:
        return None
    intent = decision.intent
    by = decided_by(decision)
    return {"step": decision.step, "scene": decision.scene_id, "by": by,
            "intent": (decision.detail.removeprefix("guess ") if by == "guess"
                       else intent.primary_intent if intent and by != "none" else None),
            "confidence": float(intent.score) if intent and by in ("seeds", "llm") else None,
            "layer": by,
            "latency_ms": round(float(decision.latency_ms), 2), "reason": decision.reason,
            "left": decision.left_flow}


def refusal_info(flags: list[str]) -> dict[str, Any]:
    """The caption data of a refusal by the risk guard."""
    return {"step": "refused", "scene": None, "by": "guard", "layer": "guard", "intent": None,
            "confidence": None, "latency_ms": 0.0, "reason": "", "flags": list(flags)}


def _continues_topic(decision: GateDecision) -> bool:
    """A rule that ends only some dialogues (``interrupts: [scenes]``, e.g. a bare "改到下周" after an
    application was drafted) goes on with the same subject: no "I left …" note for it."""
    if decision.step != "rule":
        return False
    try:
        rule = default_rules().rule(decision.detail)
    except KeyError:
        return False
    return isinstance(rule.interrupts, tuple)


class ChatService:
    """``store``: a :class:`~navigo_core.store.Store`. ``settings``: the composition root's Settings (required;
    the service never reads the global settings). ``llm``: an LLMClient (None: offline clarification).
    ``gate_context``: a prepared :class:`GateContext` (default: ``make_gate_context(settings, llm=llm)``,
    built on first use). ``scan_with_llm``: also ask the LLM in the risk guard (rules only by default).
    ``providers``: the composition root's provider bundle (:mod:`navigo_core.providers.selection`), passed to the
    clarify agent and the default gate context (None: ``make_providers(settings)``, one bundle for both)."""

    def __init__(self, store: Any, settings: Settings, *, llm: Any = None, gate_context: GateContext | None = None,
                 places: Any = None, today: date | None = None, scan_with_llm: bool = False,
                 providers: Providers | None = None) -> None:
        self.store = store
        self.settings = settings
        self.llm = llm
        self._gate_context = gate_context
        self.scan_with_llm = scan_with_llm
        self.providers = providers if providers is not None else make_providers(settings)
        self.agent = ClarifyAgent(settings, llm=llm, places=places, today=today, providers=self.providers)

    # --- threads ---

    @property
    def gate_context(self) -> GateContext:
        if self._gate_context is None:
            from navigo_core.scenes import make_gate_context

            self._gate_context = make_gate_context(self.settings, llm=self.llm, providers=self.providers)
        return self._gate_context

    def new_thread(self, owner: str) -> str:
        """A new thread of ``owner``, stored now (the Chat page uses :meth:`draft_thread` instead)."""
        return self.store.threads.create(owner)

    def draft_thread(self) -> str:
        """A fresh thread id; nothing is stored until its first message (``send(..., owner=...)``)."""
        return self.store.threads.new_id()

    def threads(self, owner: str, limit: int = 50) -> list[dict[str, Any]]:
        return self.store.threads.list(owner, limit)

    def history(self, thread_id: str) -> list[dict[str, Any]]:
        return self.store.threads.messages(thread_id)

    def clarify_state(self, thread_id: str) -> ClarifyState | None:
        raw = self.store.threads.get_state(thread_id).get("clarify")
        return ClarifyState.model_validate(raw) if raw else None

    # --- messages ---

    def send(self, thread_id: str, text: str, *, owner: str | None = None, department: str = "",
             name: str = "") -> ChatReply:
        """Answer one user message (see the module doc for the order of the steps).

        A message over the length limit raises ``InputError("limits.message_too_long")`` before
        anything is stored or routed. With ``owner``, a thread from :meth:`draft_thread` is stored
        together with its first message (never empty); another owner's thread raises ChatError. The scenes act
        for the thread's owner (``GateContext.user``; ``department`` and ``name``: theirs, stored on what they
        create: the name is the traveller of an application, not the id an identity provider gave)."""
        check_message(text, Limits.from_settings(self.settings))  # (0) nothing stored half-way, no rule runs on it
        try:
            self.store.threads.add_message(thread_id, "user", text, owner=owner)  # (1) before anything runs
        except KeyError as exc:
            raise ChatError("chat.no_thread") from exc
        return self._answer(thread_id, text, department, name)

    def retry(self, thread_id: str, *, department: str = "", name: str = "") -> ChatReply:
        """Run the last user message again (after an error); it is not saved a second time."""
        return self._answer(thread_id, self._last_user_text(thread_id), department, name)

    def continue_offline(self, thread_id: str, *, department: str = "", name: str = "") -> ChatReply:
        """Switch the thread's clarification to offline mode and answer the last user message with it."""
        text = self._last_user_text(thread_id)
        state = self.clarify_state(thread_id)
        if state is None or not state.active:
            return self._answer(thread_id, text, department, name)
        state = state.model_copy(update={"mode": "offline"})
        return self._clarify(thread_id, text, state, self._resume_decision(text))

    def _last_user_text(self, thread_id: str) -> str:
        users = [m for m in self.store.threads.messages(thread_id) if m["role"] == "user"]
        if not users:
            raise ChatError("chat.no_message")
        return users[-1]["content"]

    def _answer(self, thread_id: str, text: str, department: str = "", name: str = "") -> ChatReply:
        lang = detect_lang(text, default=getattr(self.settings, "default_language", "en"))
        try:
            flags = scan_input(text, llm=self.llm if self.scan_with_llm else None)  # (2) risk guard
            if flags:
                reply_text = t("chat.refused", lang)
                info: dict[str, Any] | None = refusal_info(flags)
                mid = self.store.threads.add_message(thread_id, "assistant", reply_text, status="refused",
                                                     meta={"flags": flags, "decision": info})
                return ChatReply(status="refused", text=reply_text, message_id=mid, lang=lang, decision=info)
            thread_state = self.store.threads.get_state(thread_id)
            raw = thread_state.get("clarify")
            clarify = ClarifyState.model_validate(raw) if raw else None
            clarifying = clarify is not None and clarify.active
            subject = dict(thread_state.get("subject") or {})
            thread = self.store.threads.get(thread_id)
            owner = thread["owner"] if thread else None
            stated = self._stated_grade(text)
            if stated and owner:  # the user's profile keeps it for their next conversations too
                self._remember(owner, grade=stated)
            if stated and subject.get("grade") != stated:  # kept whichever way the message goes on
                subject["grade"] = stated
                self._save_state(thread_id, subject=subject)
            flow = thread_state.get("active_flow")
            # (3) one gate decision, also while a clarification is open (it stands for the trip flow):
            # an answer resumes it, another request (a route, a policy question, a booking) leaves it
            active = ActiveFlow(flow_id=TRIP_FLOW, scene_id=TRIP_SCENE) if clarifying else (
                ActiveFlow(**flow) if flow else None)
            context = replace(self.gate_context, active_flow=active, store=self.store, subject=subject,
                              user=owner, user_department=department, user_name=name)
            decision = gate_classify(text, context)
            if clarifying and clarify is not None and decision.step == "resume":
                return self._clarify(thread_id, text, clarify, decision)
            if decision.scene_id == TRIP_SCENE and not clarifying:
                state = self.agent.start(thread_id, text, lang=decision.lang)
                return self._clarify(thread_id, text, state, decision)
            scene_reply = run_scene(decision, text, context)
            reply_text = scene_reply.text
            if decision.left_flow and not _continues_topic(decision):
                reply_text = self._switch_note(decision, context) + "\n\n" + reply_text
            handoff = None
            if scene_reply.payload.get("handoff") == "route" and scene_reply.payload.get("route_request"):
                handoff = {"kind": "route", "route_request": scene_reply.payload["route_request"],
                           "round_trip": bool(scene_reply.payload.get("round_trip"))}
            elif scene_reply.payload.get("page") == "reimbursement":
                given = None if scene_reply.payload.get("grade_assumed", True) else scene_reply.payload.get("grade")
                handoff = {"kind": "reimbursement", "grade": given or subject.get("grade"),
                           "application": scene_reply.payload.get("application")}
            application = scene_reply.payload.get("application")
            if isinstance(application, dict) and application.get("number"):
                subject["application"] = application["number"]
            handed = scene_reply.payload.get("subject")
            if isinstance(handed, dict):
                subject.update({k: v for k, v in handed.items() if isinstance(k, str) and v})
            if stated and decision.step == "fallback":  # "我是经理级" alone: acknowledged, not "not sure what you need"
                reply_text = self._grade_noted(stated, scene_reply.lang)
            info = decision_info(decision)
            status = "error" if scene_reply.error else "reply"
            mid = self.store.threads.add_message(thread_id, "assistant", reply_text, status=status,
                                                 meta={"decision": info, "handoff": handoff})
            # a digression (off-topic, a question answered in one turn) keeps an open clarification
            keep = clarifying and clarify is not None and decision.left_flow is None
            self.store.threads.set_state(thread_id, {
                "clarify": clarify.model_dump(mode="json") if keep and clarify is not None else None,
                "active_flow": scene_reply.flow.model_dump() if scene_reply.flow and not keep else None,
                "subject": subject})
            return ChatReply(status=status, text=reply_text, decision=info, handoff=handoff, message_id=mid,
                             lang=scene_reply.lang)
        except ChatError:
            raise
        except Exception as exc:
            log.exception("chat failed")
            message = exc.message(lang) if isinstance(exc, NavigoError) else t("chat.failed", lang)
            self.store.threads.add_message(thread_id, "assistant", message, status="error",
                                           meta={"error": f"{type(exc).__name__}: {exc}"[:500]})
            raise ChatError(detail=str(exc)) from exc

    def _remember(self, owner: str, **values: str) -> None:
        if not self.store.profiles.keep(owner, **values):  # a read-only store: the conversation goes on
            log.info("the profile of %s was not saved (read-only store)", owner[:20])

    def _policy(self) -> Any:
        from navigo_core.business.policy import policy_status

        settings = getattr(self.gate_context, "settings", None) or self.settings
        return policy_status(getattr(settings, "travel_policy_file", "") or None)[0]

    def _stated_grade(self, text: str) -> str | None:
        """The grade the traveller states about themself in ``text`` (``TravelPolicy.stated_grade``), or None
        (also without a readable policy: the business scenes then refuse on their own)."""
        policy = self._policy()
        return policy.stated_grade(text) if policy is not None else None

    def _grade_noted(self, grade: str, lang: str) -> str:
        policy = self._policy()
        label = policy.grade(grade).label(lang) if policy is not None else grade
        return t("policy.grade.noted", lang, grade=grade, label=label)

    def _resume_decision(self, text: str) -> dict[str, Any]:
        return {"step": "resume", "scene": TRIP_SCENE, "by": "dialogue", "intent": None, "confidence": None,
                "layer": "dialogue", "latency_ms": 0.0, "reason": ""}

    def _save_state(self, thread_id: str, **changes: Any) -> None:
        """Update the thread's state (the other keys, e.g. its subject, are kept)."""
        self.store.threads.set_state(thread_id, {**self.store.threads.get_state(thread_id), **changes})

    def _switch_note(self, decision: GateDecision, context: GateContext) -> str:
        """"Leaving the trip planning: …" when a message left an open dialogue for another scene."""
        registry = context.scenes()
        left = registry.by_flow(decision.left_flow or "")
        scene = registry.find(decision.scene_id)
        return t("chat.switched", decision.lang, left=left.label_text(decision.lang) if left else "—",
                 label=scene.label_text(decision.lang) if scene else "—")

    def _clarify(self, thread_id: str, text: str, state: ClarifyState,
                 decision: GateDecision | dict[str, Any]) -> ChatReply:
        info = decision if isinstance(decision, dict) else decision_info(decision)
        if state.mode == "llm" and self.llm is not None:
            stream = self.agent.stream_turn(state, text)
            reply = ChatReply(status="asking", decision=info, lang=state.lang)
            reply.stream = self._stream(thread_id, stream, reply)
            return reply
        turn, new_state = self.agent.offline_turn(state, text)
        reply = ChatReply(status=turn.status, decision=info, lang=state.lang)
        self._finish(thread_id, turn, new_state, reply)
        return reply

    def _stream(self, thread_id: str, stream: ClarifyStream, reply: ChatReply) -> Iterator[str]:
        try:
            yield from stream
        except Exception as exc:
            log.exception("clarification stream failed")
            mid = self.store.threads.add_message(thread_id, "assistant", stream.partial, status="error",
                                                 meta={"decision": reply.decision,
                                                       "error": f"{type(exc).__name__}: {exc}"[:500]})
            self._save_state(thread_id, clarify=stream._state.model_dump(mode="json"), active_flow=None)
            reply.status, reply.text, reply.message_id = "error", stream.partial, mid
            reply.error = t("chat.failed", reply.lang)
            raise ChatError(detail=str(exc)) from exc
        self._finish(thread_id, stream.turn, stream.state, reply)

    def _finish(self, thread_id: str, turn: Turn, state: ClarifyState, reply: ChatReply) -> None:
        summary = turn.summary.model_dump() if turn.summary else None
        handoff = None
        if turn.status == "done" and turn.summary is not None:
            handoff = {"kind": "plan", "summary": summary,
                       "request_text": request_text(state.slots, state.lang, turn.summary)}
        content = turn.content if (turn.content or turn.status != "error") else (turn.error or "")
        meta = {"decision": reply.decision, "summary": summary, "quick_replies": turn.quick_replies,
                "handoff": handoff, "error": turn.error, "checks": turn.checks}
        mid = self.store.threads.add_message(thread_id, "assistant", content, status=turn.status,
                                             meta={k: v for k, v in meta.items() if v})
        # after an error ``state`` is the state as it was: retry or continue offline from there
        self._save_state(thread_id, clarify=state.model_dump(mode="json"), active_flow=None)
        reply.status, reply.text, reply.summary = turn.status, content, summary
        reply.quick_replies, reply.handoff, reply.message_id, reply.error = turn.quick_replies, handoff, mid, turn.error
