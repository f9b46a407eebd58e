"""Travel-application scene: a draft application from what the user says, shown as a card to confirm.

The draft is saved (status ``draft``) and the ``travel_application`` flow starts: the next
"submit" / "提交" / "确认提交" submits it. A draft that misses required fields (purpose, origin,
dates, estimated cost: ``Application.missing``) is not "within the policy" and is not submitted: the
scene lists what is missing and reads the next messages as those fields ("从上海出发，预算3000元"); a
"submit" before that is refused with the list. When the trip exceeds the travel policy, the next
message (if it is not just "submit") is taken as the justification, then the application is
submitted. "cancel" / "取消" leaves the draft as it is. Without a destination the scene asks for
one and reads the answer together with the first message. The grade checked is the one the
traveller gave (in the message, earlier in the chat, or the settings: ``policy_and_grade``); an
assumed one is said so.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from navigo_core.business.applications import (
    Application,
    ApplicationService,
    IncompleteApplication,
    card_text,
    department_of,
    extract_purpose,
    fields_text,
    policy_and_grade,
    store_for,
    user_of,
)
from navigo_core.business.policy import grade_note, requested_grade
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.intent.rules import default_rules, normalize
from navigo_core.providers.places import PlaceProvider
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


def _places(context: GateContext) -> PlaceProvider:
    """The composition root's provider (make_gate_context selects it from the settings, as for the weather
    scene); a bare GateContext reads places with the offline gazetteer."""
    from navigo_core.providers.places import GazetteerPlaceProvider

    return context.places if context.places is not None else GazetteerPlaceProvider()


def _reply(text: str, lang: str, **kw: Any) -> SceneReply:
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang, **kw)


def _payload(app: Application, **extra: Any) -> dict[str, Any]:
    return {"application": app.model_dump(mode="json"), "missing": app.missing, **extra}


def _ask_missing(app: Application, lang: str, flow: ActiveFlow, *lead: str) -> SceneReply:
    text = "\n\n".join([*(p for p in lead if p),
                         t("application.scene.ask_missing", lang, number=app.number, missing=fields_text(app.missing, lang))])
    return _reply(text, lang, asks=True, flow=flow, payload=_payload(app))


def _fill_in(service: ApplicationService, app: Application, message: str, context: GateContext,
             lang: str) -> tuple[Application, str]:
    """The missing fields the message gives ("从上海出发，拜访客户，预算3000元"), saved (audited); what was
    filled in, as a sentence. A message that gives none is kept all the same: as the purpose when that is
    missing, else as the justification when one is needed. Nothing typed is lost."""
    from navigo_core.understand import parse_request

    text = message.strip()
    stated = policy_and_grade(context)[0].stated_grade(text)  # "我是经理级": the chat keeps it; not a field
    req = parse_request(text, today=date.today(), places=_places(context))
    values: dict = {}
    if "origin" in app.missing:
        origin = (req.origin.display_name(req.lang) if req.origin else "") or req.origin_text
        if not origin and req.destination_text and not app.visits(req.destination_text):
            origin = (req.destination.display_name(req.lang) if req.destination else "") or req.destination_text
        if origin:
            values["origin"] = origin
    if "estimated_cost" in app.missing and req.budget is not None and req.budget.amount:
        values["estimated_cost"], values["currency"] = req.budget.amount, req.budget.currency or app.currency
    if "purpose" in app.missing:
        segments = [p.strip() for p in re.split(r"[,，;；。]", text) if p.strip()]
        purpose = extract_purpose(text) or next((extract_purpose(f"for {p}") for p in segments
                                                 if extract_purpose(f"for {p}")), "")
        if purpose:
            values["purpose"] = purpose
        elif not values and not stated:
            values["purpose"] = text[:200]
    if values:
        app = service.modify(app.number, actor=user_of(context), **values)
        shown = [f for f in ("purpose", "origin", "estimated_cost") if f in values]
        return app, t("application.scene.filled", lang, fields=fields_text(shown, lang))
    if app.unjustified and text and not stated:
        return service.justify(app.number, text, actor=user_of(context)), ""
    return app, ""


def _continue(message: str, context: GateContext, flow: ActiveFlow, lang: str) -> SceneReply:
    service = ApplicationService(store_for(context), settings=context.settings)
    if flow.slots.get("pending_text"):  # we asked for the destination / dates
        pending = flow.slots["pending_text"]
        if any(m.role == "destination" for m in find_places(message)):  # "杭州，下周一到周三": read it first
            return _create(f"{message.strip()} {pending}", context, lang)
        return _create(f"{pending} {'去' if lang == 'zh' else 'to '}{message.strip()}", context, lang)
    number = str(flow.slots.get("number", ""))
    try:
        app = service.get(number, user_of(context))
        if LEAVE.search(message):
            return _reply(t("application.scene.kept_draft", lang, number=number), lang,
                          payload={"application": app.model_dump(mode="json")})
        is_submit = bool(SUBMIT.search(message))
        if app.missing and app.status == "draft":
            if is_submit:  # the service refuses it (the policy first, then the list of what is missing)
                try:
                    service.submit(number, actor=user_of(context))
                except IncompleteApplication as exc:  # the flow stays to read the fields
                    return _ask_missing(app, lang, flow, exc.message(lang))
            app, filled = _fill_in(service, app, message, context, lang)
            if app.missing:
                return _ask_missing(app, lang, flow, filled)
            nxt = "application.scene.justify_then_submit" if app.unjustified else "application.scene.confirm"
            return _reply("\n\n".join(p for p in (filled, card_text(app, lang), t(nxt, lang)) if p), lang, asks=True,
                          flow=flow, payload=_payload(app, card=True))
        if app.unjustified and is_submit:
            return _reply(t("application.scene.ask_justification", lang, number=number), lang, asks=True,
                          flow=flow, payload={"application": app.model_dump(mode="json")})
        if not is_submit and not app.unjustified:
            return _reply(t("application.scene.ask_submit", lang, number=number), lang, asks=True, flow=flow,
                          payload={"application": app.model_dump(mode="json")})
        app = service.submit(number, actor=user_of(context),
                             justifications=None if is_submit else message.strip())
    except NavigoError as exc:
        return SceneReply.from_error(SCENE.scene_id, exc, lang)
    return _reply(t("application.scene.submitted", lang, number=app.number) + "\n\n" + card_text(app, lang), lang,
                  payload={"application": app.model_dump(mode="json"), "card": True})


def _create(message: str, context: GateContext, lang: str) -> SceneReply:
    policy, grade, assumed = policy_and_grade(context, message)
    service = ApplicationService(store_for(context), settings=context.settings)
    try:
        app = service.create_from_text(message, owner=user_of(context), places=_places(context), today=date.today(),
                                       policy=policy, grade=grade, owner_department=department_of(context),
                                       traveller=context.user_name or None)
    except NavigoError as exc:
        if exc.code == "application.error.no_city":
            return _reply(t("application.scene.ask_destination", lang), lang, asks=True,
                          flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots={"pending_text": message}))
        return SceneReply.from_error(SCENE.scene_id, exc, lang)
    parts = [t("application.scene.drafted", lang, number=app.number), card_text(app, lang)]
    if assumed:
        parts.append(grade_note(policy, requested_grade(context, message, policy), lang))
    if app.missing:
        parts.append(t("application.scene.ask_missing", lang, number=app.number, missing=fields_text(app.missing, lang)))
    else:
        parts.append(t("application.scene.justify_then_submit" if app.unjustified else "application.scene.confirm",
                       lang))
    return _reply("\n\n".join(parts), lang, asks=True, payload=_payload(app, card=True, grade=grade),
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
