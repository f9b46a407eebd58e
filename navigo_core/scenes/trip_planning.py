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

import re
import unicodedata
from typing import Any

from navigo_core.i18n import t
from navigo_core.scenes.descriptor import (
    GATE_FLAGS,
    ActiveFlow,
    GateContext,
    GateRule,
    RouteKind,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    join_list,
)

FLOW_ID = "trip_plan"
SLOTS = ("destination", "origin", "dates", "duration_days", "travellers", "budget")
ASK_ORDER = ("destination", "when", "travellers", "budget")  # "when": dates or duration_days

_ZH_NUM = {"一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUM = r"\d+|[一二两俩三四五六七八九十]+"


def _int(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if len(text) == 1:
        return _ZH_NUM.get(text)
    if text.startswith("十"):
        return 10 + (_ZH_NUM.get(text[1:], 0) if len(text) > 1 else 0)
    if len(text) >= 2 and text[1] == "十":
        return _ZH_NUM.get(text[0], 0) * 10 + (_ZH_NUM.get(text[2:], 0) if len(text) > 2 else 0)
    return None


_DURATION = re.compile(rf"(?<!月)({_NUM})\s*-?\s*(?:days?|nights?|天|日游|日|晚)(?![a-z])", GATE_FLAGS)
_TRAVELLERS = re.compile(
    rf"({_NUM})\s*(?:个人|位|口人|人|(?:people|persons|adults|travell?ers|guests|of us)\b)|\bfamily of (\d+)|\bgroup of (\d+)",
    GATE_FLAGS)
_BUDGET = re.compile(
    r"(?:\bbudget(?:\s+(?:of|is|around|about))?|预算(?:是|为|大概|大约|约|在)?)\s*[:：]?\s*"
    r"((?:¥|￥|\$|€|£|rmb|cny|usd|eur)?\s*\d[\d,.]*\s*(?:k|万|千|元|块|yuan|rmb|usd|dollars|eur|euros)?"
    r"|[一二两三四五六七八九十百千万]+\s*(?:元|块)?)", GATE_FLAGS)
_DATES = re.compile(
    r"\b(?:next (?:week|month|weekend|year)|this (?:weekend|week|month)|tomorrow|over the weekend"
    r"|in (?:january|february|march|april|may|june|july|august|september|october|november|december)"
    r"|(?:on|from) (?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
    r"|\d{1,2}月\d{1,2}[日号]?(?:[-到至~]\d{1,2}[日号]?)?|\d{1,2}月(?:份|初|中|底)?|下周[一二三四五六日天末]?|下个?月|明天|后天|这周末|周末|国庆|五一|春节|元旦|寒假|暑假|端午|中秋",
    GATE_FLAGS)
_CAP = r"[A-Z][\w'-]*(?:\s+(?:de |del |la |le )?[A-Z][\w'-]*)*"
_EN_DEST = re.compile(rf"\b(?:to|in|visit(?:ing)?|around|explore|exploring)\s+({_CAP})")
_EN_ORIGIN = re.compile(rf"\bfrom\s+({_CAP})")
_ZH_STOP = r"(?=玩|旅游|旅行|出差|度假|游玩|看看|逛|过|待|呆|住|的|[，。,、\s]|\d|[一二两三四五六七八九十]+[天日晚]|$)"
_ZH_DEST = (
    re.compile(r"([\u4e00-\u9fff]{2,6}?)(?:\d+|[一二两三四五六七八九十]+)日游"),
    re.compile(r"(?:规划|安排|计划|设计)(?:一下|一个|个)?([\u4e00-\u9fff]{2,5}?)(?:的)?(?:行程|旅行|旅游|之旅|攻略)"),
    re.compile(rf"(?:去|到|前往|飞|游)([\u4e00-\u9fff]{{2,6}}?){_ZH_STOP}"),
)
_ZH_ORIGIN = re.compile(r"从([\u4e00-\u9fff]{2,6}?)(?:出发|去|到|飞|坐)")
_ZH_LEAD = re.compile(r"^(?:帮我|请|给我|我想|我要|我们|想|要|规划|安排|计划|设计|一下|一个|个|去|到|玩)+")
_NOT_PLACE = re.compile(r"^(?:哪里|哪儿|那里|这里|旅游|旅行|出差|玩|一趟|一下|外地|国外|海边|The|A|An|My|Our|I)$")


def extract_trip(message: str) -> dict[str, Any]:
    """The trip slots found in ``message`` (only the ones present)."""
    text = unicodedata.normalize("NFKC", message or "")
    slots: dict[str, Any] = {}
    m = _DURATION.search(text)
    if m and (n := _int(m.group(1))):
        slots["duration_days"] = n
    m = _TRAVELLERS.search(text)
    if m and (n := _int(next(g for g in m.groups() if g))):
        slots["travellers"] = n
    m = _BUDGET.search(text)
    if m:
        slots["budget"] = m.group(1).strip()
    m = _DATES.search(text)
    if m:
        slots["dates"] = m.group(0).strip()
    m = _EN_ORIGIN.search(text) or _ZH_ORIGIN.search(text)
    if m and not _NOT_PLACE.match(m.group(1)):
        slots["origin"] = m.group(1).strip()
    for rx in (_EN_DEST, *_ZH_DEST):
        for m in rx.finditer(text):
            place = _ZH_LEAD.sub("", m.group(1).strip())
            if len(place) >= 2 and not _NOT_PLACE.match(place) and place != slots.get("origin"):
                slots["destination"] = place
                break
        if "destination" in slots:
            break
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


def _bare_answer(message: str, missing: list[str]) -> dict[str, Any]:
    """A short answer to the question asked last ("Hangzhou", "3", "杭州")."""
    text = unicodedata.normalize("NFKC", message).strip(" ?？!！。.,，")
    if not missing or not text:
        return {}
    first = missing[0]
    if first == "destination" and len(text) <= 30 and not re.search(r"\d", text):
        return {"destination": text}
    n = _int(text)
    if n and first == "travellers":
        return {"travellers": n}
    if n and first == "when":
        return {"duration_days": n}
    if first == "budget" and re.search(r"\d", text):
        return {"budget": text}
    return {}


def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    flow = context.active_flow
    resuming = flow is not None and flow.flow_id == FLOW_ID
    previous: dict[str, Any] = dict(flow.slots) if resuming and flow is not None else {}
    found = extract_trip(message)
    if resuming and not found:
        found = _bare_answer(message, _missing(previous))
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
    gate=GateRule(
        patterns=(
            r"\b(?:plan|planning|organi[sz]e|arrange|prepare|design|suggest)\b.{0,25}\b(?:trip|itinerary|holiday|vacation|journey|getaway|tour)s?\b",
            r"\bitinerar(?:y|ies)\b",
            r"\b\d+[- ](?:day|night) (?:trip|itinerary|tour|holiday|vacation)\b",
            r"行程规划|规划.{0,8}行程|安排.{0,8}行程|旅行计划|旅游计划|旅游攻略|出行方案|行程安排|行程单?推荐",
            r"(?:想|要|打算|计划|准备)(?:去|到).{1,8}?(?:玩|旅游|旅行|度假|逛逛|游玩)",
            r"\b(?:want|going|plan(?:ning)?|hoping) to (?:go|travel|fly) to [A-Z]\w+.{0,30}\b(?:for|on) (?:a |an )?(?:holiday|vacation|trip|\d+ days?)\b",
            r"(?:\d+|[一二两三四五六七八九十]+)日游|(?:\d+|[一二两三四五六七八九十]+)天.{0,4}(?:行程|旅行|旅游|自由行)",
        ),
        negatives=(r"报销|审批|发票|\bexpenses?\b|\breimburse",),
    ),
    route=SceneRoute(
        kind=RouteKind.MODEL,
        intents=("itinerary_planning", "flight_search", "train_search", "hotel_search", "attractions_query"),
    ),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=40,
    capability="scene.trip_planning.capability",
    prompt_fragment="scene.trip_planning.prompt",
)
