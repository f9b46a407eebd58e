"""Details of the user's travel applications ("show my travel applications" / "查看我的出差申请").

A number or a city in the message: that application's card and audit trail; else the list. NaviGo has no
booking system: a question about a ticket, a hotel order, a refund or a rebooking is told so first (where to
look), then shown the applications.
"""

from __future__ import annotations

import re

from navigo_core.business.applications import ApplicationService, audit_lines, card_text, store_for, user_of
from navigo_core.i18n import t
from navigo_core.scenes.approval_query import status_line
from navigo_core.scenes.booking import kinds_named
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute


#: what only a booking system knows: tickets, orders, refunds, rebookings (besides a flight, train, hotel or car)
_ORDER = re.compile(r"\b(?:tickets?|e-?tickets?|orders?|refund(?:ed|s)?|rebook(?:ed|ing)?|reservations?|booking"
                    r"(?: confirmation)?|confirmation|issued)\b|票|订单|退款|改签|出票|行程单|预订|预定", re.I)


def names_an_order(message: str) -> bool:
    """The message asks about something booked (a ticket, an order, a refund), which NaviGo cannot see."""
    return bool(_ORDER.search(message) or kinds_named(message))


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    note = t("application.scene.no_orders", lang) if names_an_order(message) else ""
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
        text = "\n\n".join(x for x in (note, t("application.scene.none", lang)) if x)
        return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                          payload={"applications": [], "orders_note": bool(note)})
    text = "\n".join([*([note, ""] if note else []), t("application.scene.list_head", lang, count=len(apps)),
                      *(f"- {status_line(a, lang)}" for a in apps[:20])])
    return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                      payload={"applications": [a.model_dump(mode="json") for a in apps[:20]], "orders_note": bool(note)})


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
