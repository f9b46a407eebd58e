"""Trip-planning scene: the model route (open-ended travel requests).

For now the handler says that trip planning starts with a short clarification,
lists the slots it already detected (destination, origin, dates, days,
travellers, budget) and asks for the first missing one. The payload carries
``handoff="plan"`` and the slots; the ``trip_plan`` flow keeps them between
turns (the resume gate brings the answers back here). The chat issue connects
this scene to the LLM clarification and the Plan page.

The gate reaches this scene by its own rule ("plan a 3-day trip", "行程规划"),
by the intents ``itinerary_planning``, ``flight_search``, ``train_search``,
``hotel_search`` and ``attractions_query``, and as step 5 (the model route)
for on-topic messages nothing else took.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from navigo_core.i18n import detect_lang, t
from navigo_core.scenes.descriptor import (
    ActiveFlow,
    GateContext,
    RouteKind,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    join_list,
)
from navigo_core.understand import (
    ParsedRequest,
    normalize_text,
    parse_budget,
    parse_dates,
    parse_request,
    update_request,
)

FLOW_ID = "trip_plan"
SLOTS = ("destination", "origin", "dates", "duration_days", "travellers", "budget")
ASK_ORDER = ("destination", "when", "travellers", "budget")  # "when": dates or duration_days

# the field the last question asked for, as update_request names it
_EXPECT = {"destination": "destination", "when": "days", "travellers": "travellers", "budget": "budget"}


def _span_text(text: str, spans: list[tuple[int, int]]) -> str:
    return text[min(a for a, _ in spans):max(b for _, b in spans)].strip() if spans else ""


def _date_words(text: str, today: date) -> str:
    """The words that give the dates ("下周五", "in July", "5月1日到5日"), without a trip length."""
    found = parse_dates(text, today)
    spans = [(a, b) for a, b in found.spans
             if (d := parse_dates(text[a:b], today)).start or d.end or d.period]  # not "五天" alone
    return _span_text(text, spans)


def _slots(req: ParsedRequest, text: str, today: date) -> dict[str, Any]:
    slots: dict[str, Any] = {}
    if req.destination_text:
        slots["destination"] = req.destination_text
    if req.origin_text and req.origin_text != req.destination_text:
        slots["origin"] = req.origin_text
    if when := _date_words(text, today):
        slots["dates"] = when
    if req.days:
        slots["duration_days"] = req.days
    if req.travellers:
        slots["travellers"] = req.travellers
    if req.budget is not None:
        budget = parse_budget(text)
        slots["budget"] = _span_text(text, [budget.span]) if budget else text.strip(" ?？!！。.,，")
    return slots


def trip_slots(message: str, *, today: date | None = None, lang: str | None = None,
               expect: str | None = None) -> dict[str, Any]:
    """The trip slots in ``message`` (only the ones present), read by :mod:`navigo_core.understand`.

    Texts as the user wrote them (destination, origin, dates, budget), numbers for
    ``duration_days`` and ``travellers``. ``expect`` is the slot asked for last (``ASK_ORDER``): a bare
    answer ("Hangzhou", "3", "6000") fills it; a message that says something itself is read as it is.
    """
    today = today or date.today()
    text = normalize_text(message)
    slots = _slots(parse_request(text, today=today, lang=lang), text, today)
    if not slots and expect in _EXPECT:
        # a bare answer ("杭州", "3", "6000"): read as the slot asked for
        previous = ParsedRequest(lang=lang or detect_lang(text))
        slots = _slots(update_request(previous, text, today=today, expect=_EXPECT[expect]), text, today)
    return slots


def _missing(slots: dict[str, Any]) -> list[str]:
    out = []
    for name in ASK_ORDER:
        if name == "when":
            if not (slots.get("dates") or slots.get("duration_days")):
                out.append(name)
        elif not slots.get(name):
            out.append(name)
    return out


def _slot_text(name: str, value: Any, lang: str) -> str:
    return t(f"scene.trip_planning.slot.{name}", lang, value=value)


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    flow = context.active_flow
    resuming = flow is not None and flow.flow_id == FLOW_ID
    previous: dict[str, Any] = dict(flow.slots) if resuming and flow is not None else {}
    asked = _missing(previous)[0] if resuming and _missing(previous) else None
    found = trip_slots(message, lang=lang, expect=asked)
    slots = previous | found
    missing = _missing(slots)
    have = join_list([_slot_text(k, slots[k], lang) for k in SLOTS if slots.get(k)], lang) if lang != "zh" else \
        "；".join(_slot_text(k, slots[k], lang) for k in SLOTS if slots.get(k))

    parts = [] if resuming else [t("scene.trip_planning.start", lang)]
    if resuming:
        parts.append(t("scene.trip_planning.noted", lang) if found else t("scene.trip_planning.not_understood", lang))
    if have:
        parts.append(t("scene.trip_planning.have", lang, slots=have))
    if missing:
        parts.append(t(f"scene.trip_planning.ask.{missing[0]}", lang))
    else:
        parts.append(t("scene.trip_planning.complete", lang))
    turns = (flow.turns + 1) if resuming and flow is not None else 1
    return SceneReply(
        scene_id=SCENE.scene_id, text=" ".join(parts), lang=lang, asks=bool(missing),
        payload={"handoff": "plan", "slots": slots, "missing": missing, "complete": not missing},
        flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots=slots, turns=turns) if missing else None,
    )


SCENE = SceneDescriptor(
    scene_id="trip_planning",
    label="scene.trip_planning.label",
    signal_keywords=("trip", "travel", "itinerary", "vacation", "holiday", "journey", "flight", "hotel", "railway",
                     "sightseeing", "attractions", "行程", "旅行", "旅游", "出差", "出游", "度假", "航班", "机票",
                     "酒店", "火车", "高铁", "景点", "攻略"),
    ontology_fields=SLOTS,
    route=SceneRoute(kind=RouteKind.MODEL, intents=("itinerary_planning", "attractions_query")),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=40,
    capability="scene.trip_planning.capability",
    prompt_fragment="scene.trip_planning.prompt",
)
