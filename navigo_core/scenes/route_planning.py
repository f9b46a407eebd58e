"""Route-planning scene: pull origin, destination and stops out of a chat message.

Nothing is resolved here (no place provider, no network): the texts go into
the reply's payload as ``route_request``, a dict that ``RouteRequest(**d)``
accepts, with ``handoff="route"`` so the Chat page can open the Route page with
it. Without an origin and a destination the reply asks for them and starts the
``route_plan`` flow; the next message is merged in (the resume gate sends it
here).

Understood phrasings (English and Chinese, mixed too)::

    from A to B via C, D and E           plan a route from A via C and D to B
    A to B via C                         start at A, stop at C and D, end at B
    from A to B, then to C, finally D    from A via C and back to A (round trip)
    从A出发，经过B、C，到D                 从A到D，途经B和C          A到D，途经B、C
    起点A，终点D，途经B、C                 从A经B、C去D              从A出发经过B回到A
    A→B→C→D  (also ->, =>, ➔)

Several destinations ("to B, then to C") keep the last as the destination and
the earlier ones as stops. "fastest/shortest/最快/最短" set the strategy.
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
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    join_list,
)

FLOW_ID = "route_plan"

# --- extraction ----------------------------------------------------------------

_VERBS_AFTER_TO = (
    "go|get|visit|drive|travel|plan|see|make|have|be|do|reach|stop|take|find|optimi[sz]e|know|arrive|return|come|"
    "head|fly|ride|walk|start|end|pass|check|add|include|avoid|use|cover|hit|the route|a route|my route|the list|"
    "my list|the map|the trip|my trip|this route|me|you|us"
)
_CJK_STOP_MARK = r"经(?![济理典营常验历纬度费])"
# (role, regex) in match order: longer phrases first. Roles: o origin, d destination,
# b back-to (round trip possible), s stops, x terminator (ends the previous part, no role).
_MARKERS: tuple[tuple[str, str], ...] = (
    ("o", r"\bstart(?:ing)?\s+(?:point\s+)?(?:at|in|from|is)\b"),
    ("o", r"\b(?:depart(?:ing)?|leav(?:e|ing))\s+(?:from\s+)?"),
    ("o", r"\b(?:origin|start)\s*(?:is|:)"),
    ("d", r"\b(?:end(?:ing)?|finish(?:ing)?|arriv(?:e|ing))\s+(?:up\s+)?(?:at|in)\b"),
    ("d", r"\b(?:destination|end)\s*(?:is|:)"),
    ("b", r"\b(?:(?:and\s+)?(?:come\s+|go\s+|head\s+)?back|return(?:ing)?)\s+to\b"),
    ("s", r"\b(?:passing|going)\s+(?:through|by)\b"),
    ("s", r"\bstopping\s+(?:at|in|by)\b"),
    ("s", r"\bwith\s+stops?\s+(?:at|in)\b"),
    ("s", r"\bstops?\s*(?:at|in|:)"),
    ("s", r"\bwaypoints?\s*:?"),
    ("s", r"\bby\s+way\s+of\b"),
    ("s", r"\bvia\b|\bthrough\b|\bvisit(?:ing)?\b"),
    ("o", r"\bfrom\b"),
    ("d", rf"\bto\b(?!\s+(?:{_VERBS_AFTER_TO})\b)"),
    ("o", r"出发地(?:是|为|:)?|起点(?:是|为|在|:)?|起始地(?:是|为|:)?"),
    ("d", r"目的地(?:是|为|:)?|终点(?:是|为|在|:)?"),
    ("b", r"(?:最后|最终|再)?(?:回到|返回|回)(?=起点|出发地|出发点|原地)|(?:最后|最终|再)?(?:回到|返回)"),
    ("s", r"中途(?:经过|停靠|停|去)?|途中(?:经过|去)?|顺路(?:去|经过)?|途经|途径|经过|经由|路过|停靠"),
    ("s", _CJK_STOP_MARK),
    ("d", r"(?:然后|再|最后|最终)?(?:到达|抵达|前往|去往|开到|到|至|去)"),
    ("o", r"从|由"),
    ("x", r"出发|启程"),
)
_MARKER_RE = re.compile("|".join(f"(?P<m{i}>{p})" for i, (_, p) in enumerate(_MARKERS)), GATE_FLAGS)
_ROLE = {f"m{i}": role for i, (role, _) in enumerate(_MARKERS)}

_ARROW = re.compile(r"\s*(?:→|->|=>|⟶|➔|➡|➝|⇒|-->|—>|–>)\s*")
_LIST_SPLIT = re.compile(
    r"\s*(?:(?<!\d)[,，]|[,，](?!\s*[+\-−]?\d)|[、;；/]|\band then\b|\band\b|\bthen\b|以及|还有|然后|和(?![田平林县])|与|及|跟|再)\s*",
    GATE_FLAGS)
_CLAUSE_END = re.compile(r"[。;；!！?？\n]")
_STRIP_CHARS = " \t,，。.;；:：!！?？、\"'“”‘’[]【】<>《》–—"
_LEAD = re.compile(
    r"^(?:(?:please|pls|kindly|the|and then|and finally|and|then|finally|lastly|also)\b\s*"
    r"|(?:然后|并且|并|再|最后|最终|依次|分别|先|顺便|一路|去|到|在)\s*)", GATE_FLAGS)
_TAIL = re.compile(
    r"(?:(?:^|\s+)(?:please|pls|thanks|thank you|for me|by car|on the way|in the end|at the end|finally|and|then|"
    r"in (?:the )?(?:best|optimal|shortest|fastest) order|(?:the )?(?:best|optimal|fastest|shortest) (?:route|order|way)|"
    r"route|tomorrow|today|tonight)"
    r"|\s*(?:的路线|的线路|的路|路线|线路|的导航|导航|怎么走|怎么去|的最优顺序|最优顺序|的顺序|顺序|最短|最快|"
    r"谢谢|吧|呢|啊|嘛|吗|开车|自驾|驾车|一趟|为止|结束|出发|的))$", GATE_FLAGS)
_HEAD_PREFIX = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|i want to|i'd like to|i need to|help me|let's|lets)\s+)*"
    r"(?:(?:plan|make|find|show|give|get|build|create|calculate|compute|optimi[sz]e)\s+(?:me\s+)?)?"
    r"(?:(?:a|an|the|my)\s+)?(?:(?:best|optimal|shortest|fastest|driving|good|quick|round)\s+)*"
    r"(?:(?:route|path|directions|trip|order|itinerary)\b)?\s*(?::)?\s*", GATE_FLAGS)
_ZH_PREFIX = re.compile(
    r"^(?:帮我|请|麻烦|给我|我想|我要|我需要|能不能|可以|规划|安排|计划|设计|查询|看看|算一下|一下|"
    r"一条|一个|最优|最短|最快|的|路线|线路|导航|路径|自驾|开车|驾车|:|：)+")
_ROUND = re.compile(r"\bround[- ]?trip\b|\bloop\b|环线|环形|回到起点|返回起点|回到出发地|绕一圈", GATE_FLAGS)
_BACK_TO_START = re.compile(
    r"^(?:the\s+)?(?:start|starting point|origin|beginning|where i started)$|^(?:起点|出发地|出发点|原地|原点)$", GATE_FLAGS)
_FASTEST = re.compile(r"\b(?:fastest|quickest)\b|最快|时间最短|最省时|用时最短", GATE_FLAGS)
_SHORTEST = re.compile(r"\bshortest\b|距离最短|最短|路程最短|最省路", GATE_FLAGS)
_BALANCED = re.compile(r"\bbalanced?\b|平衡|兼顾", GATE_FLAGS)
_CJK = re.compile(r"[\u3400-\u9fff]")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    return re.sub(r"\s+", " ", text).strip()


def _clean(part: str) -> str:
    """One place text: fillers and punctuation trimmed."""
    prev = None
    part = part.strip(_STRIP_CHARS)
    while part != prev:
        prev = part
        part = _LEAD.sub("", part).strip(_STRIP_CHARS)
        part = _TAIL.sub("", part).strip(_STRIP_CHARS)
    return part


def _plausible(place: str) -> bool:
    if not place:
        return False
    if _CJK.search(place):
        return len(place) <= 20
    return len(place.split()) <= 6


def _single(part: str) -> str:
    """The origin or destination text of a part: cut at a clause end; keep ", France" / ", 江苏"."""
    part = _CLAUSE_END.split(part, maxsplit=1)[0]
    head, sep, tail = part.partition(",")
    if sep and not re.search(r"\d\s*,\s*[+\-−]?\d", part):
        tail = tail.strip()
        qualifier = re.fullmatch(r"[A-Z][A-Za-z .'-]{0,30}|[\u4e00-\u9fff]{2,4}", tail)
        clause = re.search(r"路线|顺序|最|帮|请|优化|规划|怎么|谢|麻烦|一下|开车|自驾|时间|出发|\b(?:and|then|please)\b", tail, re.I)
        part = f"{head.strip()}, {tail}" if qualifier and not clause else head
    return _clean(part)


def _many(part: str) -> list[str]:
    part = _CLAUSE_END.split(part, maxsplit=1)[0]
    return [p for p in (_clean(x) for x in _LIST_SPLIT.split(part)) if _plausible(p)]


def _head_origin(head: str) -> str:
    head = _ZH_PREFIX.sub("", _HEAD_PREFIX.sub("", head.strip(_STRIP_CHARS)))
    place = _single(head)
    return place if _plausible(place) and not re.search(r"\b(?:i|we|want|need|route|plan)\b", place, re.I) else ""


def _strategy(text: str) -> str | None:
    if _FASTEST.search(text):
        return "fastest"
    if _SHORTEST.search(text):
        return "shortest"
    if _BALANCED.search(text):
        return "balanced"
    return None


def _finish(origin: str, destination: str, stops: list[str], text: str, round_trip: bool) -> dict[str, Any]:
    if round_trip and origin and not destination:
        destination = origin
    seen: set[str] = set()
    ends = {origin.casefold(), destination.casefold()}
    clean_stops = []
    for stop in stops:
        key = stop.casefold()
        if key in ends or key in seen:
            continue
        seen.add(key)
        clean_stops.append(stop)
    out: dict[str, Any] = {"origin": origin, "destination": destination, "stops": clean_stops}
    strategy = _strategy(text)
    if strategy:
        out["strategy"] = strategy
    return out


def extract_route(message: str) -> dict[str, Any]:
    """``{"origin", "destination", "stops"[, "strategy"]}`` found in ``message`` (texts; "" when absent)."""
    text = _normalise(message)
    round_trip = bool(_ROUND.search(text))

    # A → B → C chains
    parts = [p for p in _ARROW.split(text)]
    if len(parts) >= 2:
        first = _head_origin(parts[0]) or _single(parts[0])
        last = _single(parts[-1])
        middle = [s for p in parts[1:-1] for s in _many(p)]
        if first and last:
            return _finish(first, last, middle, text, round_trip)

    origin, destination, back = "", "", False
    stops: list[str] = []
    dests: list[str] = []
    marks = list(_MARKER_RE.finditer(text))
    for i, m in enumerate(marks):
        role = _ROLE[m.lastgroup or ""]
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        segment = text[m.end():end]
        if role == "o" and not origin:
            origin = _single(segment)
        elif role in ("d", "b"):
            place = _single(segment)
            if role == "b" and (not place or _BACK_TO_START.match(place)):
                back = True
            elif place:
                dests.append(place)
        elif role == "s":
            stops.extend(_many(segment))
    if marks and not origin:
        origin = _head_origin(text[: marks[0].start()])
    if back:
        dests.append(origin)
        round_trip = True
    dests = [d for d in dests if _plausible(d)]
    if dests:
        destination = dests[-1]
        stops = dests[:-1] + stops if not back else stops + dests[:-1]
    if not _plausible(origin):
        origin = ""
    return _finish(origin, destination, stops, text, round_trip)


def _loose(message: str) -> list[str]:
    """Items of a bare answer such as "Shanghai and Hangzhou" / "上海，杭州"."""
    return _many(_normalise(message))


def _merge(previous: dict[str, Any], message: str) -> dict[str, Any]:
    found = extract_route(message)
    merged = {
        "origin": found["origin"] or previous.get("origin", ""),
        "destination": found["destination"] or previous.get("destination", ""),
        "stops": list(previous.get("stops", [])) + [s for s in found["stops"] if s not in previous.get("stops", [])],
    }
    if not (found["origin"] or found["destination"] or found["stops"]):
        items = _loose(message)
        if items and not merged["origin"] and not merged["destination"]:
            merged["origin"] = items[0]
            if len(items) > 1:
                merged["destination"] = items[-1]
                merged["stops"] += items[1:-1]
        elif items and not merged["origin"]:
            merged["origin"] = items[0]
            merged["stops"] += items[1:]
        elif items and not merged["destination"]:
            merged["destination"] = items[-1]
            merged["stops"] += items[:-1]
    out = _finish(merged["origin"], merged["destination"], merged["stops"], "", False)
    strategy = found.get("strategy") or previous.get("strategy")
    return out | {"strategy": strategy} if strategy else out


# --- handler -------------------------------------------------------------------------

def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    flow = context.active_flow
    resuming = flow is not None and flow.flow_id == FLOW_ID
    found = _merge(flow.slots, message) if resuming and flow is not None else extract_route(message)
    origin, destination, stops = found["origin"], found["destination"], found["stops"]
    sep = "、" if lang == "zh" else ", "

    if origin and destination:
        request: dict[str, Any] = {"origin": origin, "destination": destination, "stops": stops}
        if found.get("strategy"):
            request["strategy"] = found["strategy"]
        round_trip = origin.casefold() == destination.casefold()
        if round_trip:
            text = t("scene.route_planning.summary_round", lang, origin=origin, stops=sep.join(stops) or "—")
        elif stops:
            text = t("scene.route_planning.summary", lang, origin=origin, destination=destination,
                     stops=sep.join(stops))
        else:
            text = t("scene.route_planning.summary_direct", lang, origin=origin, destination=destination)
        text += "\n" + t("scene.route_planning.open" if stops else "scene.route_planning.add_stops", lang)
        return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                          payload={"route_request": request, "handoff": "route", "round_trip": round_trip})

    missing = [k for k in ("origin", "destination") if not found[k]]
    if not origin and not destination:
        text = t("scene.route_planning.ask_both", lang)
    elif not origin:
        text = t("scene.route_planning.ask_origin", lang, destination=destination)
    else:
        text = t("scene.route_planning.ask_destination", lang, origin=origin)
    if stops:
        text += " " + t("scene.route_planning.stops_so_far", lang, stops=join_list(stops, lang))
    partial = {k: v for k, v in found.items() if v}
    turns = (flow.turns + 1) if resuming and flow is not None else 1
    return SceneReply(
        scene_id=SCENE.scene_id, text=text, lang=lang, asks=True,
        payload={"route_request": partial, "missing": missing},
        flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots=found, turns=turns),
    )


# --- gate ----------------------------------------------------------------------------

_STRONG = re.compile(
    r"\S\s*(?:→|->|=>|⟶|➔|➡|➝|⇒)\s*\S"
    r"|\bfrom\b.{1,60}?\bto\b.{1,80}?\b(?:via|through|stopping (?:at|in|by)|passing (?:through|by)|with stops?)\b"
    r"|\bfrom\b.{1,60}?\b(?:via|through|stopping (?:at|in|by)|passing (?:through|by))\b.{1,80}?\b(?:to|back to|end(?:ing)? (?:at|in))\b"
    r"|\bstart(?:ing)? (?:at|in|from)\b.{1,60}?\bend(?:ing)? (?:at|in)\b"
    r"|\b(?:best|optimal|shortest|fastest) (?:order|sequence) (?:of|for) (?:the )?(?:stops|places|visits|cities)\b"
    r"|\bwaypoints?\b"
    r"|(?:途经|途径|经过|经由|路过).{1,40}?(?:到|至|去|前往|抵达|回到|返回|终点)"
    r"|(?:从|由).{1,20}?(?:出发|到|至|去|前往).{0,30}?(?:途经|途径|经过|经由|路过|" + _CJK_STOP_MARK + r")"
    r"|(?:从|由).{1,20}?" + _CJK_STOP_MARK + r".{1,40}?(?:到|至|去|前往|抵达|回到)"
    r"|[^\s,，。]{1,15}(?:到|至|去)[^\s,，。]{1,15}[,，]?\s*(?:途经|途径|经过|经由|路过)"
    r"|\bfrom\b.{1,60}?\bto\b.{1,60}?\bthen\b.{0,20}?\bto\b"
    r"|(?:起点|出发地).{1,20}?(?:终点|目的地)",
    GATE_FLAGS,
)
_WEAK = re.compile(
    r"\b(?:plan|optimi[sz]e|find|show|make|build|create|calculate|compute|get|give me)\b.{0,30}\b(?:route|routes|path|directions)\b"
    r"|\broutes?\b.{0,40}\b(?:from|via|through|between)\b"
    r"|\b(?:directions|how (?:do|can) i (?:get|drive)|drive|driving)\b.{0,20}\bfrom\b.{1,60}?\bto\b"
    r"|路线|线路|导航|路径规划|怎么走|怎么开车去|顺路"
    r"|(?:从|由).{1,20}?出发.{0,30}?(?<![日号月\d])(?:到|至|去|前往|回到)"
    r"|(?:从|由)[^,，。]{1,15}?(?:到|至|去)[^,，。]{1,15}?(?:怎么走|怎么去|开车|自驾|驾车)",
    GATE_FLAGS,
)
_NEGATIVE = re.compile(
    r"\b(?:trips?|itinerar(?:y|ies)|vacations?|holidays?|hotels?|flights?|visas?|weather|forecast)\b"
    r"|\b(?:budget|adults?|kids?|children)\b"
    r"|出差|旅行|旅游|之旅|行程|度假|酒店|住宿|机票|航班|火车票|高铁票|签证|报销|审批|天气|预算|大人|小孩",
    GATE_FLAGS,
)


def _gate(text: str) -> str | None:
    m = _STRONG.search(text)
    if m:
        return "strong route structure"
    m = _WEAK.search(text)
    if m and not _NEGATIVE.search(text):
        return "route words"
    return None


SCENE = SceneDescriptor(
    scene_id="route_planning",
    label="scene.route_planning.label",
    signal_keywords=("route", "directions", "waypoint", "navigation", "detour", "路线", "线路", "导航", "途经", "路径",
                     "绕路"),
    ontology_fields=("origin", "destination", "stops", "strategy"),
    gate=GateRule(matcher=_gate),
    route=SceneRoute(intents=()),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=20,
    capability="scene.route_planning.capability",
    prompt_fragment="scene.route_planning.prompt",
)
