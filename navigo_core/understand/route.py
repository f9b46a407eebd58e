"""Multi-stop routes from text: origin, destination, stops, strategy, round trip.

:func:`parse_route` reads one message, :func:`update_route` the next message of the same
conversation (a bare answer such as "Hangzhou" or "上海，杭州" fills what is missing). Names are
kept as the user wrote them (any case: "from boston to denver via chicago"); nothing is resolved
here (the Route page resolves them). Understood phrasings (English and Chinese, mixed too)::

    from A to B via C, D and E           plan a route from A via C and D to B
    A to B via C                         start at A, stop at C and D, end at B
    from A to B, then to C, finally D    from A via C and back to A (round trip)
    visit C, D and E from A and back     round trip from A via C
    从A出发，经过B、C，到D                 从A到D，途经B和C          A到D，途经B、C
    起点A，终点D，途经B、C                 从A经B、C去D              从A出发经过B回到A
    A→B→C→D  (also ->, =>, ➔)

Several destinations ("to B, then to C") keep the last as the destination and the earlier ones
as stops. "fastest/shortest/最快/最短" set the strategy. A place piece that starts with a name the
gazetteer knows and goes on with loose lower-case words ("denver tomorrow please") is cut to the
name (:mod:`.places`); unknown names stay as written.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from navigo_core.understand.numbers import normalize_text
from navigo_core.understand.places import _GAZ, ARROWS, find_places

__all__ = ["RouteReading", "parse_route", "place_list", "update_route"]

_FLAGS = re.IGNORECASE | re.ASCII


class RouteReading(BaseModel):
    """A route as written: names as typed ("" when absent); ``round_trip`` when it ends where it starts."""

    origin: str = ""
    destination: str = ""
    stops: list[str] = Field(default_factory=list)
    strategy: str | None = None
    round_trip: bool = False

    def request(self) -> dict[str, object]:
        """``{"origin", "destination", "stops"[, "strategy"]}`` (what ``RouteRequest(**d)`` accepts)."""
        out: dict[str, object] = {"origin": self.origin, "destination": self.destination, "stops": list(self.stops)}
        if self.strategy:
            out["strategy"] = self.strategy
        return out


# --- markers -------------------------------------------------------------------------------

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
    ("b", r"\b(?:and|then)\s+(?:come\s+|go\s+|head\s+|get\s+|drive\s+)?back\b(?:\s+again)?|\band\s+return\b"),
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
    ("b", r"(?:最后|最终|再)?(?:回到|返回|回)(?=起点|出发地|出发点|原地)|(?:最后|最终|再)?(?:回到|返回)"
          r"|(?:然后|最后|最终|再)?回来"),
    ("s", r"中途(?:经过|停靠|停|去)?|途中(?:经过|去)?|顺路(?:去|经过)?|途经|途径|经过|经由|路过|停靠"),
    ("s", _CJK_STOP_MARK),
    ("r", r"往返(?:于)?"),
    ("d", r"(?:然后|再|最后|最终)?(?:到达|抵达|前往|去往|开到|到|至|去)"),
    ("o", r"从|由"),
    ("x", r"出发|启程"),
)
_MARKER_RE = re.compile("|".join(f"(?P<m{i}>{p})" for i, (_, p) in enumerate(_MARKERS)), _FLAGS)
_ROLE = {f"m{i}": role for i, (role, _) in enumerate(_MARKERS)}

_ARROW = re.compile(rf"\s*{ARROWS}\s*")
_LIST_SPLIT = re.compile(
    r"\s*(?:(?<!\d)[,，]|[,，](?!\s*[+\-−]?\d)|[、;；/]|\band then\b|\band\b|\bthen\b|以及|还有|然后|和(?![田平林县])|与|及|跟|再)\s*",
    _FLAGS)
_CLAUSE_END = re.compile(r"[。;；!！?？\n]")
_STRIP_CHARS = " \t,，。.;；:：!！?？、\"'“”‘’[]【】<>《》–—"
_LEAD = re.compile(
    r"^(?:(?:please|pls|kindly|the|and then|and finally|and|then|finally|lastly|also)\b\s*"
    r"|(?:然后|并且|并|再|最后|最终|依次|分别|先|顺便|一路|去|到|在)\s*)", _FLAGS)
_TAIL = re.compile(
    r"(?:(?:^|\s+)(?:please|pls|thanks|thank you|for me|by car|on the way|in the end|at the end|finally|and|then|"
    r"in (?:the )?(?:best|optimal|shortest|fastest) order|(?:the )?(?:best|optimal|fastest|shortest) (?:route|order|way)|"
    r"fastest|shortest|quickest|route|tomorrow|today|tonight)"
    r"|\s*(?:的路线|的线路|的路|路线|线路|的导航|导航|怎么走|怎么去|的最优顺序|最优顺序|的顺序|顺序|最短|最快|"
    r"谢谢|吧|呢|啊|嘛|吗|开车|自驾|驾车|一趟|为止|结束|出发|的))$", _FLAGS)
_HEAD_PREFIX = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|i want to|i'd like to|i need to|help me|let's|lets)\s+)*"
    r"(?:(?:plan|make|find|show|give|get|build|create|calculate|compute|optimi[sz]e)\s+(?:me\s+)?)?"
    r"(?:(?:a|an|the|my)\s+)?(?:(?:best|optimal|shortest|fastest|driving|good|quick|round)\s+)*"
    r"(?:(?:route|path|directions|trip|order|itinerary)\b)?\s*(?::)?\s*", _FLAGS)
_ZH_PREFIX = re.compile(
    r"^(?:帮我|请|麻烦|给我|我想|我要|我需要|能不能|可以|规划|安排|计划|设计|查询|看看|算一下|一下|"
    r"一条|一个|最优|最短|最快|的|路线|线路|导航|路径|自驾|开车|驾车|:|：)+")
_ROUND = re.compile(r"\bround[- ]?trip\b|\bloop\b|环线|环形|回到起点|返回起点|回到出发地|绕一圈|往返", _FLAGS)
_BACK_TO_START = re.compile(
    r"^(?:the\s+)?(?:start|starting point|origin|beginning|where i started)$|^(?:起点|出发地|出发点|原地|原点)$", _FLAGS)
_FASTEST = re.compile(r"\b(?:fastest|quickest)\b|最快|时间最短|最省时|用时最短", _FLAGS)
_SHORTEST = re.compile(r"\bshortest\b|距离最短|最短|路程最短|最省路", _FLAGS)
_BALANCED = re.compile(r"\bbalanced?\b|平衡|兼顾", _FLAGS)
_CJK = re.compile(r"[\u3400-\u9fff]")
_LOOSE_WORDS = re.compile(r"^(?:\s*[a-z][a-z'-]*)+\s*$")  # lower-case words only ("tomorrow please")


# --- pieces ------------------------------------------------------------------------------

def _name(piece: str) -> str:
    """A piece cut to the place name it starts with when loose lower-case words follow it.

    "denver tomorrow please" → "denver"; "Paris, France", "苏州工业园区", "A", "31.23,121.47" stay.
    """
    if not piece or _CJK.search(piece) or re.search(r"\d", piece):
        return piece
    found = [m for m in find_places(f"to {piece}") if m.start == 3 and m.known]
    if not found:
        return piece
    name = found[0].text
    rest = piece[len(name):]
    return name if rest and _LOOSE_WORDS.match(rest) else piece


def _clean(part: str) -> str:
    """One place text: fillers and punctuation trimmed."""
    prev = None
    part = part.strip(_STRIP_CHARS)
    while part != prev:
        prev = part
        part = _LEAD.sub("", part).strip(_STRIP_CHARS)
        part = _TAIL.sub("", part).strip(_STRIP_CHARS)
    return _name(part)


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


def _qualifies(name: str, word: str) -> bool:
    """``word`` is the region or country of the city ``name`` ("Springfield", "illinois" / "IL")."""
    if _CJK.search(name) or _CJK.search(word):
        return False
    if re.fullmatch(r"[A-Z]{2}", word):
        return "city" in _GAZ.name_kinds(name)
    kinds = _GAZ.name_kinds(word)
    return "city" in _GAZ.name_kinds(name) and bool(kinds & {"region", "country"}) and "city" not in kinds


def _many(part: str) -> list[str]:
    """The names of a list ("C, D and E", "苏州、无锡和常州"); "springfield, illinois" stays one name."""
    part = _CLAUSE_END.split(part, maxsplit=1)[0]
    out: list[str] = []
    pos, sep = 0, ""
    for m in [*_LIST_SPLIT.finditer(part), None]:
        piece = _clean(part[pos:m.start() if m else len(part)])
        if _plausible(piece):
            if out and sep.strip() in (",", "，") and _qualifies(out[-1], piece):
                out[-1] = f"{out[-1]}, {piece}"
            else:
                out.append(piece)
        if m:
            pos, sep = m.end(), m.group(0)
    return out


def _is_list(segment: str) -> bool:
    """True when ``segment`` names several places ("Suzhou, Wuxi", "苏州、无锡"), not one qualified name
    ("Paris, France", "Springfield, IL", "苏州，江苏")."""
    part = _CLAUSE_END.split(segment, maxsplit=1)[0]
    if re.search(r"[、;；/]|\band\b|以及|和|与|及", part):
        return True
    m = re.search(r"[,，]", part)
    if not m or re.search(r"\d\s*[,，]\s*[+\-−]?\d", part):
        return False
    tail = part[m.end():].strip(_STRIP_CHARS)
    kinds = _GAZ.name_kinds(tail)
    return bool(kinds & {"city", "alias"}) and not kinds & {"region", "country"}


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


def _finish(origin: str, destination: str, stops: list[str], text: str, round_trip: bool) -> RouteReading:
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
    return RouteReading(origin=origin, destination=destination, stops=clean_stops, strategy=_strategy(text),
                        round_trip=bool(origin) and origin.casefold() == destination.casefold())


# --- reading ---------------------------------------------------------------------------------

def parse_route(text: str) -> RouteReading:
    """The route written in ``text`` (see the module docstring)."""
    text = normalize_text(text)
    round_trip = bool(_ROUND.search(text))

    # A → B → C chains
    parts = _ARROW.split(text)
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
            elif role == "d" and len(listed := _many(segment)) > 1 and _is_list(segment):
                dests.extend(listed)  # "to Suzhou, Wuxi and back", "去苏州、无锡再回到上海"
            elif place:
                dests.append(place)
        elif role == "r":  # "上海往返", "往返苏州和无锡": a round trip; what follows are stops
            round_trip = True
            stops.extend(_many(segment))
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


def place_list(text: str) -> list[str]:
    """The names of a bare list answer ("Shanghai and Hangzhou", "上海，杭州"), as written."""
    return _many(normalize_text(text))


def update_route(previous: RouteReading, text: str) -> RouteReading:
    """``previous`` with the next message ``text``: new ends replace old ones, new stops are added.

    A bare list ("Hangzhou", "上海，杭州") fills the missing ends: origin first, destination last,
    the names between them stops.
    """
    found = parse_route(text)
    origin = found.origin or previous.origin
    destination = found.destination or previous.destination
    stops = list(previous.stops) + [s for s in found.stops if s not in previous.stops]
    if not (found.origin or found.destination or found.stops):
        items = place_list(text)
        if items and not origin and not destination:
            origin = items[0]
            if len(items) > 1:
                destination = items[-1]
                stops += items[1:-1]
        elif items and not origin:
            origin = items[0]
            stops += items[1:]
        elif items and not destination:
            destination = items[-1]
            stops += items[:-1]
    out = _finish(origin, destination, stops, "", False)
    return out.model_copy(update={"strategy": found.strategy or previous.strategy})
