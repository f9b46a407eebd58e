"""Change a travel application's dates, city or purpose, found by number or description.

"把我的杭州出差改到5月3日到5日" / "move TA-2026-0001 to June 2 - June 4" / "change my Hangzhou trip
purpose to client training" / "我的杭州出差改去苏州". Several matches → a question (flow
``travel_modify``), never a guess. A submitted or approved application goes back to draft; every
change is audited (field old → new).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from navigo_core.business.applications import AmbiguousApplication, ApplicationService, card_text, store_for, user_of
from navigo_core.errors import NavigoError
from navigo_core.i18n import t
from navigo_core.scenes.descriptor import GateContext, SceneDescriptor, SceneReply, SceneRoute
from navigo_core.scenes.travel_cancel import ask_which, pick
from navigo_core.understand import normalize_text, parse_dates
from navigo_core.understand.places import find_places

FLOW_ID = "travel_modify"
_AFTER = re.compile(r"(?:改到|改为|改成|推迟到|提前到|延期到|延长到|调整到|换到|\b(?:to|until|till)\b)(?P<rest>.+)$", re.IGNORECASE)
_PURPOSE = re.compile(r"(?:purpose|reason)\s+(?:to|is|=|:)\s*(?P<p>.+)$|(?:事由|目的)(?:改为|改成|是|为|:|：)\s*(?P<z>.+)$",
                      re.IGNORECASE)
# the words that ask for another city; the city itself is read by navigo_core.understand
_CITY = re.compile(r"(?:改去|改为去|换成去|目的地改为|目的地改成|目的地换成)|\b(?:destination|city)\s+to\s+|\bgo\s+to\s+(?=.*\binstead\b)",
                   re.IGNORECASE)


def _new_city(rest: str) -> str:
    """The place right after a "change the city" cue ("苏州", "Suzhou", "new york")."""
    rest = rest.lstrip()
    cue = "去" if re.match(r"[\u4e00-\u9fff]", rest) else "to "
    found = [m for m in find_places(cue + rest) if m.role == "destination" and m.start == len(cue)]
    return found[0].text if found else ""


def parse_changes(text: str, *, today: date) -> dict[str, Any]:
    """The changes a message asks for: start_date / end_date / cities / purpose (only those named)."""
    s = normalize_text(text)
    out: dict[str, Any] = {}
    m = _PURPOSE.search(s)
    if m:
        out["purpose"] = (m.group("p") or m.group("z") or "").strip(" 。.")
        s = s[:m.start()]
    m = _CITY.search(s)
    if m and (city := _new_city(s[m.end():])):
        out["cities"] = [city]
        s = s[:m.start()] + s[m.end() + s[m.end():].find(city) + len(city):]
    m = _AFTER.search(s)
    dates = parse_dates(m.group("rest") if m else s, today)
    if dates.start:
        out["start_date"] = dates.start
    if dates.end:
        out["end_date"] = dates.end
    return out


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    service = ApplicationService(store_for(context), settings=context.settings)
    owner = user_of(context)
    flow = context.active_flow
    request = str(flow.slots.get("request", message)) if flow is not None and flow.flow_id == FLOW_ID else message
    try:
        app, request = pick(service, message, owner, flow, FLOW_ID, context.subject.get("application"))
        changes = parse_changes(request.replace(app.number, " "), today=date.today())
        if "start_date" in changes and "end_date" not in changes and app.start_date and app.end_date:
            changes["end_date"] = changes["start_date"] + (app.end_date - app.start_date)  # keep the length
        if not changes:
            return SceneReply(scene_id=SCENE.scene_id, text=t("application.scene.ask_change", lang, number=app.number),
                              lang=lang, asks=True, payload={"application": app.model_dump(mode="json")})
        app = service.modify(app.number, actor=owner, **changes)
    except AmbiguousApplication as exc:
        return ask_which(exc, SCENE.scene_id, FLOW_ID, request, lang)
    except NavigoError as exc:
        return SceneReply.from_error(SCENE.scene_id, exc, lang)
    return SceneReply(scene_id=SCENE.scene_id,
                      text=t("application.scene.modified", lang, number=app.number) + "\n\n" + card_text(app, lang),
                      lang=lang, payload={"application": app.model_dump(mode="json"), "card": True,
                                          "changes": {k: str(v) for k, v in changes.items()}})


SCENE = SceneDescriptor(
    scene_id="travel_modify",
    label="application.scene.modify_label",
    signal_keywords=("change trip", "修改出差"),
    ontology_fields=("number", "description", "start_date", "end_date", "cities", "purpose"),
    route=SceneRoute(intents=("travel_modify",)),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=14,
    capability="application.scene.modify_capability",
    prompt_fragment="application.scene.modify_prompt",
)
