"""Cancel a travel application by its number or a description ("my Hangzhou trip" / "我的杭州出差").

Several matches (or none named) → a question listing them, never a guess; the answer (a number or
a city) is read in the ``travel_cancel`` flow. Every cancellation is audited.
"""

from __future__ import annotations

from navigo_core.business.applications import (
    AmbiguousApplication,
    Application,
    ApplicationService,
    extract_number,
    store_for,
    user_of,
)
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.scenes.descriptor import ActiveFlow, GateContext, SceneDescriptor, SceneReply, SceneRoute
from navigo_core.understand.places import find_places

FLOW_ID = "travel_cancel"


def pick(service: ApplicationService, message: str, owner: str, flow: ActiveFlow | None, flow_id: str,
         subject: str | None = None) -> tuple[Application, str]:
    """(application, original request text): the answer in a running flow narrows its candidates.

    ``subject``: the application the conversation is about (its number); it is taken when the
    message itself names no application that can be found (a bare "改到下周")."""
    if flow is not None and flow.flow_id == flow_id and flow.slots.get("candidates"):
        allowed = set(flow.slots["candidates"])
        found = [a for a in service.search(message, owner) if a.number in allowed]
        original = str(flow.slots.get("request", ""))
        if len(found) == 1:
            return found[0], original
        cands = [service.get(n, owner) for n in flow.slots["candidates"]]
        raise AmbiguousApplication("application.error.ambiguous", candidates=found or cands, query=message)
    if subject and not extract_number(message) and not any(m.known for m in find_places(message)):
        return service.get(subject, owner), message
    return service.find(message, owner), message


def ask_which(exc: AmbiguousApplication, scene_id: str, flow_id: str, request: str, lang: str) -> SceneReply:
    return SceneReply(scene_id=scene_id, text=exc.message(lang), lang=lang, asks=True,
                      payload={"candidates": [a.number for a in exc.candidates]},
                      flow=ActiveFlow(flow_id=flow_id, scene_id=scene_id,
                                      slots={"candidates": [a.number for a in exc.candidates], "request": request}))


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    service = ApplicationService(store_for(context), settings=context.settings)
    owner = user_of(context)
    flow = context.active_flow
    request = str(flow.slots.get("request", message)) if flow is not None and flow.flow_id == FLOW_ID else message
    try:
        app, request = pick(service, message, owner, flow, FLOW_ID, context.subject.get("application"))
        app = service.cancel(app.number, actor=owner)
    except AmbiguousApplication as exc:
        return ask_which(exc, SCENE.scene_id, FLOW_ID, request, lang)
    except NavigoError as exc:
        return SceneReply.from_error(SCENE.scene_id, exc, lang)
    return SceneReply(scene_id=SCENE.scene_id, text=t("application.scene.cancelled", lang, number=app.number,
                                                      summary=app.short()), lang=lang,
                      payload={"application": app.model_dump(mode="json")})


SCENE = SceneDescriptor(
    scene_id="travel_cancel",
    label="application.scene.cancel_label",
    signal_keywords=("cancel trip", "取消出差"),
    ontology_fields=("number", "description"),
    route=SceneRoute(intents=("travel_cancel",)),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=14,
    capability="application.scene.cancel_capability",
    prompt_fragment="application.scene.cancel_prompt",
)
