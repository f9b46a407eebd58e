"""Travel-application scene: a draft application from what the user says, shown as a card to confirm.

The draft is saved (status ``draft``) and the ``travel_application`` flow starts: the next
"submit" / "提交" / "确认提交" submits it. When the trip exceeds the travel policy, the next
message (if it is not just "submit") is taken as the justification, then the application is
submitted. "cancel" / "取消" leaves the draft as it is. Without a destination the scene asks for
one and reads the answer together with the first message.
"""

from __future__ import annotations

import re
from datetime import date

from navigo_core.applications import ApplicationService, card_text, policy_and_grade, store_for, user_of
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.intent.rules import default_rules, normalize
from navigo_core.scenes.descriptor import (
    GATE_FLAGS,
    ActiveFlow,
    GateContext,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
)
from navigo_core.understand.places import find_places

FLOW_ID = "travel_application"
SUBMIT = re.compile(r"^\s*(?:(?:yes|ok|okay|confirm|please)[, ]*)*(?:submit|send)(?: it)?(?: please)?\s*[.!]?\s*$"
                    r"|^\s*(?:确认)?提交(?:吧|申请)?\s*[。!！]?\s*$|^\s*确认\s*$|^\s*(?:yes|ok|好的?|是的?)\s*[。.!！]?\s*$",
                    GATE_FLAGS)
SUBMIT_RULE = "travel.submit_number"  # the rule (intent/data/rules.yaml) for "submit TA-2026-0001"
NUMBER = re.compile(r"TA-\d{4}-\d{4}", GATE_FLAGS)
LEAVE = re.compile(r"^\s*(?:cancel|stop|not now|later|no)\b|^\s*(?:取消|算了|先不|不用|稍后|不要)", GATE_FLAGS)


def _places(context: GateContext):  # type: ignore[no-untyped-def]
    from navigo_core.providers.places import GazetteerPlaceProvider, make_place_provider

    try:
        return make_place_provider(context.settings) if context.settings else GazetteerPlaceProvider()
    except NavigoError:
        return GazetteerPlaceProvider()


def _reply(text: str, lang: str, **kw) -> SceneReply:  # type: ignore[no-untyped-def]
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang, **kw)


def _continue(message: str, context: GateContext, flow: ActiveFlow, lang: str) -> SceneReply:
    service = ApplicationService(store_for(context))
    if flow.slots.get("pending_text"):  # we asked for the destination / dates
        pending = flow.slots["pending_text"]
        if any(m.role == "destination" for m in find_places(message)):  # "杭州，下周一到周三": read it first
            return _create(f"{message.strip()} {pending}", context, lang)
        return _create(f"{pending} {'去' if lang == 'zh' else 'to '}{message.strip()}", context, lang)
    number = str(flow.slots.get("number", ""))
    try:
        app = service.get(number)
        if LEAVE.search(message):
            return _reply(t("application.scene.kept_draft", lang, number=number), lang,
                          payload={"application": app.model_dump(mode="json")})
        is_submit = bool(SUBMIT.search(message))
        if app.unjustified and is_submit:
            return _reply(t("application.scene.ask_justification", lang, number=number), lang, asks=True,
                          flow=flow, payload={"application": app.model_dump(mode="json")})
        if not is_submit and not app.unjustified:
            return _reply(t("application.scene.ask_submit", lang, number=number), lang, asks=True, flow=flow,
                          payload={"application": app.model_dump(mode="json")})
        app = service.submit(number, actor=user_of(context),
                             justifications=None if is_submit else message.strip())
    except NavigoError as exc:
        return _reply(exc.message(lang), lang, error=True)
    return _reply(t("application.scene.submitted", lang, number=app.number) + "\n\n" + card_text(app, lang), lang,
                  payload={"application": app.model_dump(mode="json"), "card": True})


def _create(message: str, context: GateContext, lang: str) -> SceneReply:
    policy, grade, assumed = policy_and_grade(context)
    service = ApplicationService(store_for(context))
    try:
        app = service.create_from_text(message, owner=user_of(context), places=_places(context), today=date.today(),
                                       policy=policy, grade=grade)
    except NavigoError as exc:
        if exc.code == "application.error.no_city":
            return _reply(t("application.scene.ask_destination", lang), lang, asks=True,
                          flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"pending_text": message}))
        return _reply(exc.message(lang), lang, error=True)
    parts = [t("application.scene.drafted", lang, number=app.number), card_text(app, lang)]
    if assumed and policy is not None:
        parts.append(t("application.scene.grade_assumed", lang, grade=grade))
    parts.append(t("application.scene.justify_then_submit" if app.unjustified else "application.scene.confirm", lang))
    return _reply("\n\n".join(parts), lang, asks=True,
                  payload={"application": app.model_dump(mode="json"), "card": True, "grade": grade},
                  flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"number": app.number}))


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    flow = context.active_flow
    if flow is not None and flow.flow_id == FLOW_ID:
        return _continue(message, context, flow, lang)
    if default_rules().rule(SUBMIT_RULE).matches(normalize(message)):  # "submit TA-2026-0001": a draft made elsewhere (e.g. from a plan)
        number = NUMBER.search(message).group(0).upper()  # type: ignore[union-attr]
        draft = ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"number": number})
        return _continue("submit", context, draft, lang)
    return _create(message, context, lang)


SCENE = SceneDescriptor(
    scene_id="travel_application",
    label="application.scene.label",
    signal_keywords=("travel application", "business trip", "出差申请", "差旅申请", "申请出差"),
    ontology_fields=("traveller", "purpose", "origin", "cities", "start_date", "end_date", "estimated_cost"),
    route=SceneRoute(intents=("travel_application",)),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=15,
    capability="application.scene.capability",
    prompt_fragment="application.scene.prompt",
)
