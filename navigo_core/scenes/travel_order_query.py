"""Details of the user's travel applications ("show my travel applications" / "查看我的出差申请").

A number or a city in the message: that application's card and audit trail; else the list.
"""

from __future__ import annotations

from navigo_core.business.applications import ApplicationService, audit_lines, card_text, store_for, user_of
from navigo_core.i18n import t
from navigo_core.scenes.approval_query import status_line
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    service = ApplicationService(store_for(context), settings=context.settings)
    owner = user_of(context)
    found = service.search(message, owner, statuses=None)
    if len(found) == 1:
        app = found[0]
        trail = audit_lines(service.audit(app.number), lang)  # who, when, what, what changed
        text = card_text(app, lang) + "\n\n" + t("application.scene.audit_head", lang) + "\n" + "\n".join(
            f"- {line}" for line in trail)
        return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                          payload={"application": app.model_dump(mode="json"), "card": True})
    apps = found or service.list(owner)
    if not apps:
        return SceneReply(scene_id=SCENE.scene_id, text=t("application.scene.none", lang), lang=lang,
                          payload={"applications": []})
    text = "\n".join([t("application.scene.list_head", lang, count=len(apps)),
                      *(f"- {status_line(a, lang)}" for a in apps[:20])])
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                      payload={"applications": [a.model_dump(mode="json") for a in apps[:20]]})


SCENE = SceneDescriptor(
    scene_id="travel_order_query",
    label="application.scene.order_label",
    signal_keywords=("my applications", "出差单", "差旅单"),
    ontology_fields=("number", "description"),
    route=SceneRoute(intents=("travel_order_query",)),
    handler=handle,
    priority=17,
    capability="application.scene.order_capability",
    prompt_fragment="application.scene.order_prompt",
)
