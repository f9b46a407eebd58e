"""Places in a request: find the words (any case, both languages), give them a role, resolve them.

Finding
    Cue words give the role: "from X", "starting in X", "leaving X" (origin); "to Y", "heading to Y",
    "visiting 3 cities in Y", "in Y" (destination); "between X and Y"; "X to Y" with no cue before
    X; Chinese "从X…到/去/飞/回/至Y", "X到Y", "X至Y", "X飞Y", "去Y", "Y之旅", "Y三日游". After a cue
    the longest run of words that the offline gazetteer knows (a city, a region such as "Texas" or
    "云南", a country) is the place, whatever its case; Chinese runs are cut at the longest known
    name ("成都吃火锅看熊猫" → "成都"). Unknown capitalised words (or a Chinese run cut at stop
    words) are kept as written, so an unknown name becomes a question, never another place.
    IATA codes ("PVG", "sfo" after a cue) are airports.

Resolving (:func:`resolve_mentions`)
    Each name's candidates come from the place provider. One candidate: it. Several: the
    context decides, in this order: the other places in the request (same country as a place that
    is itself certain), the language (Chinese text → China), then population (the largest at
    least :data:`DOMINANCE` times the next; inside one country :data:`SAME_COUNTRY` times), then the
    only candidate served by an airport of its name (a travel hub: Palm Springs, California rather
    than Palm Springs, Florida). Namesakes of one country within :data:`TWIN_KM` are one place
    (Kansas City, Missouri/Kansas). Otherwise the mention stays unresolved and an
    :class:`~navigo_core.understand.models.Ambiguity` lists the candidates. Never a silent swap.

Ranking (:func:`rank_places`, used by the Route page for every name of a route)
    The same decision with its reason (``place.why.*``), and the candidates ordered for a question:
    same country or continent as another place first, then distance to the nearest of them, then the
    language, then population. ``strict`` (routes) adds: an airport alone decides nothing without
    context, and a namesake far nearer to the other places than a larger one wins (or, when it is not
    nearer by as much as the other is larger, leaves the question open).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from navigo_core.errors import InputError, ProviderError
from navigo_core.providers.places import Place, PlaceProvider
from navigo_core.providers.places.latlon import parse_latlon
from navigo_core.geo import haversine_m
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider, has_cjk, normalize_name, split_qualifiers
from navigo_core.providers.places.resolve import dedupe_places, place_to_text
from navigo_core.understand.dates import MONTH_NAMES, WEEKDAY_NAMES
from navigo_core.understand.models import Ambiguity

__all__ = ["DOMINANCE", "Mention", "PlaceRanking", "PlaceReading", "dominant_place", "find_places", "place_candidates",
           "rank_places", "resolve_mentions"]

log = logging.getLogger(__name__)

_MAX_CUES = 40  # cue words examined per message: a request has a few; a flood of them costs no more
NEARER = 3.0  # among same-country namesakes, one this many times nearer to the other places wins
DOMINANCE = 10.0
SAME_COUNTRY = 4.0  # inside the country the context points to, a namesake this many times larger wins
TWIN_KM = 40.0
CONFLICT = 50.0  # a namesake this many times larger than the context's pick makes the choice a question  # the most populous candidate wins alone when it is this many times the next one
_DATA = Path(__file__).parent / "data"
_GAZ = GazetteerPlaceProvider()


_DATE_WORDS = MONTH_NAMES | WEEKDAY_NAMES
_FUNCTION_WORDS = frozenset("a an the and or to in on at by for from with of via i we my our".split())


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    words = (_DATA / "en_common_words.txt").read_text(encoding="utf-8").split()
    return frozenset(w.lower() for w in words if not w.startswith("#"))


@dataclass
class Mention:
    text: str
    start: int
    end: int
    role: str  # "origin" | "destination"
    known: bool = True  # the gazetteer knows the words
    weak: bool = False  # found after a weak cue ("in", "at", "for") or by a scan


@dataclass
class PlaceReading:
    origin_text: str | None = None
    destination_text: str | None = None
    origin: Place | None = None
    destination: Place | None = None
    ambiguities: list[Ambiguity] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)


# --- English -----------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z\u00c0-\u024f][A-Za-z\u00c0-\u024f'.\-]*|\d+|,")
_EN_ORIGIN_CUE = re.compile(
    r"\b(?:from|departing(?:\s+from)?|leaving(?:\s+from)?|starting(?:\s+(?:from|in|at|out\s+(?:in|from)))?|"
    r"beginning(?:\s+(?:in|from|at))|begins?\s+(?:in|from|at)|starts?\s+(?:in|from|at)|start\s+(?:in|from|at)|"
    r"out\s+of|based\s+in|origin(?:ating)?(?:\s+(?:in|from))?\s*:?|depart(?:s|ure)?(?:\s+from)?|"
    r"flying\s+out\s+of|fly\s+out\s+of|commenc(?:e|es|ing)\s+(?:in|from|at)|embark(?:ing)?\s+(?:from|in)|"
    r"set(?:ting)?\s+off\s+from|kick(?:ing)?\s+off\s+(?:in|from)|originating\s+(?:from|in))\s+", re.IGNORECASE)
_EN_DEST_CUE = re.compile(
    r"\b(?:to|heading\s+(?:to|for)|headed\s+(?:to|for)|going\s+to|bound\s+for|towards?|into|visit(?:ing|s)?|"
    r"explor(?:e|ing)|tour(?:ing)?|ending\s+in|ends?\s+in|arriv(?:e|ing)\s+(?:in|at)|destination\s*:?|"
    r"(?:trip|vacation|holiday|getaway|weekend|week|days?|nights?|stay|itinerary|honeymoon)\s+in|"
    r"(?:cities|towns|places|spots|destinations)\s+(?:in|across|around|of|within)|around|in|at|for)\s+",
    re.IGNORECASE)
_EN_WEAK = {"in", "at", "for", "around", "into", "towards", "toward"}
_COUNT_OF_CITIES = re.compile(r"^(?:the\s+)?(?:\w+\s+)?(?:different\s+|distinct\s+|unique\s+)?"
                              r"(?:cities|towns|places|destinations)\s+(?:in|across|around|of|within)\s+",
                              re.IGNORECASE)


def _known(words: str) -> frozenset[str]:
    return _GAZ.name_kinds(words)


def _en_place_at(text: str, pos: int, *, weak: bool) -> tuple[str, int, bool] | None:
    """The place starting at ``pos``: (words, end, known) or None."""
    rest = text[pos:]
    if m := _COUNT_OF_CITIES.match(rest):
        pos += m.end()
        rest = text[pos:]
        weak = False
    rest_tokens = [(m.group(0), pos + m.start(), pos + m.end()) for m in _TOKEN.finditer(rest[:80])]
    if rest_tokens and rest_tokens[0][0].lower() == "the":
        rest_tokens = rest_tokens[1:]
    tokens = []
    for tok in rest_tokens:
        if tok[0] == ",":
            break
        tokens.append(tok)
        if len(tokens) == 4:
            break
    if not tokens:
        return None
    first = tokens[0][0]
    # IATA code: upper case anywhere, lower case after a strong cue
    if re.fullmatch(r"[A-Za-z]{3}", first) and (first.isupper() or not weak) and first.lower() not in _common_words() \
            and not _known(first) and _GAZ.is_iata(first):
        return first, tokens[0][2], True
    for n in range(len(tokens), 0, -1):
        words = text[tokens[0][1]:tokens[n - 1][2]].rstrip(".")
        low = words.lower()
        if n == 1 and ((low in _common_words() and not words[:1].isupper()) or len(low) < 3 or low in _DATE_WORDS):
            continue
        kinds = _known(words)
        if kinds and (not weak or words[:1].isupper() or "alias" not in kinds or len(kinds) > 1):
            if weak and n == 1 and not words[:1].isupper() and kinds == {"alias"}:
                continue
            return words, tokens[0][1] + len(words), True
    # unknown, but written like a name: up to three capitalised words
    caps: list[str] = []
    for word, _, _ in tokens:
        common = word.lower() in _common_words() and (not caps or word.lower() in _FUNCTION_WORDS)
        if word[:1].isupper() and not common and word.lower() not in _DATE_WORDS and not word.isupper():
            caps.append(word)  # "Devils Lake": a common word may continue a capitalised name
        else:
            break
        if len(caps) == 3:
            break
    if caps and not weak:
        words = text[tokens[0][1]:tokens[len(caps) - 1][2]].rstrip(".")
        return words, tokens[0][1] + len(words), False
    return None


def _en_place_before(text: str, pos: int) -> tuple[str, int, bool] | None:
    """The known place ending right before ``pos`` ("boston to denver": "boston")."""
    head = text[:pos]
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(head)]
    tokens = tokens[-4:]
    for n in range(len(tokens), 0, -1):
        chunk = tokens[-n:]
        if any(t[0] == "," for t in chunk):
            continue
        words = head[chunk[0][1]:chunk[-1][2]]
        if n == 1 and words.lower() in _common_words():
            continue
        if re.fullmatch(r"[A-Za-z]{3}", words) and not _known(words) and words.lower() not in _common_words() \
                and _GAZ.is_iata(words):
            return words, chunk[0][1], True
        kinds = _known(words)
        if kinds and (kinds != {"alias"} or len(words) >= 3) and words.lower() not in _DATE_WORDS:
            return words, chunk[0][1], True
    return None


def _qualifier(text: str, end: int) -> str:
    """", Illinois" / ", TX" / ", France" right after a place, as written (else "")."""
    m = re.match(r"\s*,\s*([A-Z][A-Za-z.]+(?:\s+[A-Z][A-Za-z.]+)?)(?=\s*(?:[,.;!?)]|$|\s+(?:and|to|for|on|in|from)\b))",
                 text[end:])
    if m and (_known(m.group(1)) & {"region", "country"} or re.fullmatch(r"[A-Z]{2}", m.group(1))):
        return text[end:end + m.end()]
    return ""


def _english(text: str) -> list[Mention]:
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    def add(words: str, start: int, end: int, role: str, known: bool, weak: bool = False) -> None:
        q = _qualifier(text, end)
        if q:
            words, end = words + q, end + len(q)
        out.append(Mention(words, start, end, role, known, weak))
        taken.append((start, end))

    if m := re.search(r"\bbetween\s+", text, re.IGNORECASE):
        a = _en_place_at(text, m.end(), weak=False)
        if a:
            rest = text[a[1]:]
            if joint := re.match(r"\s+and\s+", rest):
                b = _en_place_at(text, a[1] + joint.end(), weak=False)
                if b:
                    add(a[0], a[1] - len(a[0]), a[1], "origin", a[2])
                    add(b[0], b[1] - len(b[0]), b[1], "destination", b[2])
    for cue_re, role in ((_EN_ORIGIN_CUE, "origin"), (_EN_DEST_CUE, "destination")):
        for n, m in enumerate(cue_re.finditer(text)):
            if n >= _MAX_CUES:
                break
            if not free(m.start(), m.end()):
                continue
            cue = m.group(0).strip().lower()
            weak = cue in _EN_WEAK
            if role == "destination" and cue == "to" and re.search(r"\b(?:from|starting|leaving)\s+$", text[:m.start()],
                                                                   re.IGNORECASE):
                continue
            if weak and any(x.end <= m.start() and not text[x.end:m.start()].strip() for x in out):
                continue  # "Charlotte in North Carolina": the area of the place before, not a destination
            got = _en_place_at(text, m.end(), weak=weak)
            if got and free(got[1] - len(got[0]), got[1]):
                add(got[0], got[1] - len(got[0]), got[1], role, got[2], weak)
                if role == "destination" and cue == "to" and not any(x.role == "origin" for x in out):
                    before = _en_place_before(text, m.start())
                    if before and free(before[1], before[1] + len(before[0])):
                        add(before[0], before[1], before[1] + len(before[0]), "origin", before[2])
    return out


# --- Chinese -----------------------------------------------------------------------

_ZH_CONNECT = r"(?:出发)?\s*[，,]?\s*(?:再)?(?:坐高铁|坐飞机|坐火车|开车|自驾|坐车|乘机)?(?:去往|去|到达|到|飞往|飞到|飞|前往|回到|回|至|直飞|返回|往|抵达)"
_ZH_DEST_CUE = re.compile(r"(?:想去|要去|去往|去|到|前往|飞往|飞到|抵达|回到|回|目的地(?:是|为)?[:：]?|游览?|在|逛逛|玩转)")
_ZH_TRIP_NOUN = re.compile(r"(?:之旅|[一二两三四五六七八九十\d]{1,4}日游|[一二两三四五六七八九十\d]{1,4}天游|自由行|深度游|周边游|游玩|旅游|旅行|"
                           r"攻略|行程)")  # bounded counts: a run of 10⁵ digits costs microseconds, not minutes
_ZH_STOP = re.compile(r"[，,。.!！?？;；、\s\d]|出发|的|玩|旅|游|看|吃|逛|待|呆|过|住|转|坐|乘|飞|预算|喜欢|然后|和|跟|机票|火车|汽车|航班|高铁|动车|车票|飞机|大巴|船|酒店|怎么|要|想|天|周|月|号|一|两|三")
_ZH_LEAD = re.compile(r"^.*(?:帮我|帮忙|给我|我想|我要|我们|请问|查询|查一下|查查|查寻|查|订|买|预订|预定|看看|看一下|搜索|搜|找|一下|请|想|要|今天|明天|后天|大后天|下周.|周.|号|日|晚上|早上|上午|下午|的|从)")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
# words that are never an unknown place name: times, holidays, question words, ways of travelling
_ZH_NOT_PLACE = re.compile(r"^[零〇一二两三四五六七八九十百千万\d]{2}|五一|十一|国庆|春节|清明|端午|中秋|元旦|圣诞|周|月|号|天|今|明|后|年|怎么|哪|什么|坐车|开车|打车|"
                           r"出差|旅游|旅行|机票|火车|时候|这里|那里|附近|外地|国外|老家|公司|家里|单位|个|人|我|你|他|她|们|大家")


def _zh_forward(text: str, pos: int) -> tuple[str, int, bool] | None:
    """The place starting at ``pos``: the longest known name, else the run cut at stop words."""
    while pos < len(text) and text[pos] in "，, 、:：":
        pos += 1
    m = _CJK_RUN.match(text, pos)
    if not m:
        m2 = re.match(r"\s*([A-Za-z][A-Za-z .'-]{1,30})", text[pos:])
        if m2:
            got = _en_place_at(text, pos + m2.start(1), weak=False)
            return got
        return None
    run = m.group(0)
    for n in range(min(len(run), 8), 1, -1):
        if _known(run[:n]):
            return run[:n], pos + n, True
    cut = _ZH_STOP.search(run)
    head = run[:cut.start()] if cut else run
    if 2 <= len(head) <= 6 and not _ZH_NOT_PLACE.search(head):
        return head, pos + len(head), False
    return None


def _zh_backward(text: str, pos: int) -> tuple[str, int, bool] | None:
    """The place ending at ``pos``: the longest known name, else the run after lead words."""
    head = text[:pos].rstrip()
    m = re.search(r"[\u4e00-\u9fff]+$", head)
    if not m:
        m2 = re.search(r"([A-Za-z][A-Za-z .'-]{1,30}?)\s*$", head)
        if m2:
            got = _en_place_before(head, len(head))
            return got
        return None
    run = m.group(0)
    base = m.start()
    for n in range(min(len(run), 8), 1, -1):
        if _known(run[-n:]):
            return run[-n:], base + len(run) - n, True
    stripped = _ZH_LEAD.sub("", run)
    if 2 <= len(stripped) <= 5 and not _ZH_NOT_PLACE.search(stripped):
        return stripped, base + len(run) - len(stripped), False
    return None


def _zh_qualified(text: str, mention: Mention) -> Mention:
    """"斯普林菲尔德，Illinois，美国": a place followed by its region or country (a picked quick reply) keeps them."""
    m = re.match(r"\s*[，,]\s*([^，,。;；\s]{2,30})(?:\s*[，,]\s*([^，,。;；\s]{2,30}))?\s*$", text[mention.end:])
    if not m:
        return mention
    parts = [g for g in m.groups() if g]
    if all(_known(q) & {"region", "country"} or re.fullmatch(r"[A-Z]{2}", q) for q in parts):
        return Mention(text[mention.start:mention.end + m.end()].strip(), mention.start, mention.end + m.end(),
                       mention.role, mention.known, mention.weak)
    return mention


def _chinese(text: str) -> list[Mention]:
    out: list[Mention] = []
    for n, m in enumerate(re.finditer(_ZH_CONNECT, text)):
        if n >= _MAX_CUES:
            break
        dest = _zh_forward(text, m.end())
        if not dest:
            continue
        origin = _zh_backward(text, m.start())
        if origin and (origin[2] or dest[2]) and origin[0] != dest[0]:
            out.append(Mention(origin[0], origin[1], origin[1] + len(origin[0]), "origin", origin[2]))
            out.append(Mention(dest[0], dest[1] - len(dest[0]), dest[1], "destination", dest[2]))
            return out
    if start := re.search(r"(?:从|由)\s*", text):
        got = _zh_forward(text, start.end())
        if got:
            out.append(Mention(got[0], got[1] - len(got[0]), got[1], "origin", got[2]))
    if leaving := re.search(r"([\u4e00-\u9fff]{2,8}?)\s*(?:出发|始发)", text):
        got = _zh_backward(text, leaving.end(1))
        if got and not any(x.role == "origin" for x in out):
            out.append(Mention(got[0], got[1], got[1] + len(got[0]), "origin", got[2]))
    for n, m in enumerate(_ZH_DEST_CUE.finditer(text)):
        if n >= _MAX_CUES:
            break
        got = _zh_forward(text, m.end())
        if got and (got[2] or m.group(0) != "在") and not any(x.text == got[0] for x in out):
            out.append(Mention(got[0], got[1] - len(got[0]), got[1], "destination", got[2]))
            break
    if not any(x.role == "destination" for x in out):
        for m in _ZH_TRIP_NOUN.finditer(text):
            got = _zh_backward(text, m.start())
            if got and got[2] and not any(x.text == got[0] for x in out):
                out.append(Mention(got[0], got[1], got[1] + len(got[0]), "destination", got[2]))
                break
    return out


def _leading(text: str) -> list[Mention]:
    """A message that starts with a known place ("Hangzhou, 12 people, …", "Kyoto in April", "杭州")."""
    s = text.lstrip()
    offset = len(text) - len(s)
    if has_cjk(s[:1]):
        got = _zh_forward(s, 0)
        if got and got[2]:
            return [Mention(got[0], offset, offset + len(got[0]), "destination", True)]
        return []
    got = _en_place_at(s, 0, weak=True)
    if got and got[2]:
        words = got[0]
        rest = s[len(words):]
        if not rest.strip() or re.match(r"\s*(?:[,;.!?]|in\b|for\b|on\b|from\b|with\b|next\b|this\b|\d)", rest,
                                        re.IGNORECASE):
            q = _qualifier(s, len(words))
            return [Mention(words + q, offset, offset + len(words + q), "destination", True)]
    return []


def _scan(text: str, found: list[Mention]) -> list[Mention]:
    """Last resort for a destination: a known city or region anywhere ("next weekend amsterdam, solo")."""
    for m in _TOKEN.finditer(text):
        if any(x.start <= m.start() < x.end for x in found):
            continue
        got = _en_place_at(text, m.start(), weak=True)
        if got and got[2] and len(got[0]) >= 4 and got[0].lower() not in _common_words():
            return [Mention(got[0], m.start(), m.start() + len(got[0]), "destination", True, True)]
    return []


def _scan_zh(text: str, found: list[Mention]) -> list[Mention]:
    """Last resort in Chinese: the first known place anywhere, longest name first at each position
    ("明天杭州的天气", "帮我订杭州的酒店", "我要申请出差 杭州"). Countries are not taken this way."""
    for run in _CJK_RUN.finditer(text):
        s, base, i = run.group(0), run.start(), 0
        while i < len(s) - 1:
            for n in range(min(len(s) - i, 8), 1, -1):
                words = s[i:i + n]
                kinds = _known(words)
                if kinds and kinds != {"country"} and not _ZH_NOT_PLACE.search(words):
                    if not any(x.start <= base + i < x.end for x in found):
                        return [Mention(words, base + i, base + i + n, "destination", True, True)]
                    i += n - 1
                    break
            i += 1
    return []


# one arrow between two places: "Shanghai → Shenzhen", "shanghai>shenzhen", "上海>深圳" (more arrows: a route's stops)
#: The arrows written between places (the route parser splits stops on them too).
ARROWS = r"(?:-->|—>|–>|->|=>|→|⟶|➔|➡|➝|⇒)"
_PAIR_ARROW = re.compile(rf"\s*(?:{ARROWS}|>|＞)\s*")
_PAIR_DASH = re.compile(r"(?<=[\u4e00-\u9fffA-Za-z])\s?[-—–－]\s?(?=[\u4e00-\u9fffA-Za-z])")


def _cjk_place(run: str, *, at_end: bool) -> str:
    """The longest known place at the end (or the start) of a run of Chinese characters; "" when none."""
    for n in range(min(len(run), 8), 1, -1):
        words = run[-n:] if at_end else run[:n]
        if _known(words) and not _ZH_NOT_PLACE.search(words):
            return words
    return ""


def _arrow_pair(text: str) -> list[Mention]:
    """Origin and destination written on the two sides of one arrow, each a known place; [] otherwise."""
    arrows = list(_PAIR_ARROW.finditer(text))
    return _pair_at(text, arrows[0]) if len(arrows) == 1 else []


def _dash_pair(text: str) -> list[Mention]:
    """Origin and destination joined by a dash, as tickets and forms write a route ("订票：广州-曼谷",
    "the Frankfurt-Boston leg"): the first dash between letters whose two sides are known places; [] otherwise
    (a date, a code or a hyphenated word has no place on both sides)."""
    for n, dash in enumerate(_PAIR_DASH.finditer(text)):
        if n >= _MAX_CUES:
            break
        if pair := _pair_at(text, dash):
            return pair
    return []


def _pair_at(text: str, a: re.Match[str]) -> list[Mention]:
    """The known places on the two sides of the separator ``a``; [] unless both are."""
    head, tail = text[:a.start()], text[a.end():]
    left = ""
    if head and has_cjk(head[-1:]):
        i = len(head)
        while i > max(0, len(head) - 8) and "\u4e00" <= head[i - 1] <= "\u9fff":  # the last 8 characters at most
            i -= 1
        left = _cjk_place(head[i:], at_end=True)
    else:
        starts = [m.start() for m in _TOKEN.finditer(head) if m.group(0) != ","][-3:]
        for start in starts:  # the longest first: "new york" before "york"
            words = head[start:].strip()
            if _known(words) and not (" " not in words and words.lower() in _common_words()):
                left = words
                break
    right = ""
    if tail and has_cjk(tail[:1]):
        run = re.match(r"[\u4e00-\u9fff]{1,8}", tail)
        right = _cjk_place(run.group(0), at_end=False) if run else ""
    elif (got := _en_place_at(text, a.end(), weak=False)) and got[2]:
        right = got[0]
    if not left or not right or left.lower() == right.lower():
        return []
    return [Mention(left, a.start() - len(left), a.start(), "origin"),
            Mention(right, a.end(), a.end() + len(right), "destination")]


def find_places(text: str) -> list[Mention]:
    """Origin and destination mentions in ``text`` (at most one of each), in text order."""
    if pair := _arrow_pair(text) or _dash_pair(text):
        return pair
    mentions = _chinese(text) if has_cjk(text) else []
    if not any(m.role == "destination" for m in mentions) or not any(m.role == "origin" for m in mentions):
        for m in _english(text):
            if not any(x.role == m.role for x in mentions) and not any(x.text == m.text for x in mentions):
                mentions.append(m)
    if not any(m.role == "destination" for m in mentions):
        for m in _leading(text):
            if not any(x.text == m.text for x in mentions):
                mentions.append(m)
    if not any(m.role == "destination" for m in mentions):
        mentions += _scan_zh(text, mentions) if has_cjk(text) else _scan(text, mentions)
    if has_cjk(text):
        mentions = [_zh_qualified(text, m) for m in mentions]
    # keep the first of each role; a known place beats an unknown one, a strong cue a weak one
    best: dict[str, Mention] = {}
    for m in mentions:
        cur = best.get(m.role)
        if cur is None or (m.known, not m.weak) > (cur.known, not cur.weak):
            best[m.role] = m
    return sorted(best.values(), key=lambda m: m.start)


# --- resolution ----------------------------------------------------------------------

def _candidates(mention: Mention, provider: PlaceProvider) -> list[Place]:
    """Every place the mention may denote (cities, airports, regions), namesakes merged; [] when none."""
    return place_candidates(mention.text, provider)


def place_candidates(text: str, provider: PlaceProvider, *, regions: bool = True,
                     raise_errors: bool = False) -> list[Place]:
    """Every place ``text`` may denote (cities, airports, and regions unless ``regions=False``), namesakes
    merged, most populous first; [] when none. A name matched only by another city's alternate name
    ("Venice" for Dayton, Ohio) is dropped when some city bears the name itself. A provider failure is
    logged and gives [] unless ``raise_errors``."""
    if re.fullmatch(r"[A-Za-z]{3}", text) and _GAZ.is_iata(text) and not _known(text):
        place = _GAZ.lookup_iata(text)
        return [place] if place else []
    try:
        literal = parse_latlon(text)
    except InputError:
        return []
    if literal is not None:
        return [literal]
    found_regions = _GAZ.search_regions(text) if regions and "region" in _known(text) \
        and isinstance(provider, GazetteerPlaceProvider) else []
    try:
        cands = dedupe_places(provider.search(text, limit=10))
    except ProviderError as exc:
        if raise_errors:
            raise
        log.warning("place lookup failed for %r: %s", text, exc)
        return found_regions
    if len(cands) > 1 and not has_cjk(text):
        name = normalize_name(split_qualifiers(text)[0])
        named = [c for c in cands if normalize_name(c.name) == name]
        cands = named or cands
    return _merge_twins(sorted(cands + found_regions, key=lambda c: -(c.population or 0)))


def _merge_twins(cands: list[Place]) -> list[Place]:
    """Namesakes in one country within :data:`TWIN_KM` of each other are one destination (Kansas City, MO/KS):
    keep the most populous. A region that a namesake city inside it dominates (a quarter of its people or
    more: Kyoto, 北京, New York) is that city."""
    cities = [c for c in cands if c.source != "region"]
    cands = [c for c in cands if c.source != "region" or not any(
        k.country == c.country and k.admin == c.admin and (k.population or 0) * 4 >= (c.population or 0)
        for k in cities)]
    kept: list[Place] = []
    for c in sorted(cands, key=lambda c: -(c.population or 0)):
        if not any(k.country == c.country and normalize_name(k.name) == normalize_name(c.name)
                   and haversine_m(k.lat, k.lon, c.lat, c.lon) < TWIN_KM * 1000 for k in kept):
            kept.append(c)
    return kept


def _hub(cands: list[Place]) -> Place | None:
    """The only candidate served by an airport of its name (a travel hub), when exactly one is."""
    hubs = [c for c in cands if c.source == "gazetteer" and _GAZ.has_airport(c)]
    return hubs[0] if len(hubs) == 1 else None


def _dominant(cands: list[Place], ratio: float = 0.0) -> Place | None:
    if not cands:
        return None
    if len(cands) == 1:
        return cands[0]
    pops = sorted(((c.population or 0) for c in cands), reverse=True)
    if pops[0] > 0 and pops[0] >= (ratio or DOMINANCE) * max(pops[1], 1):
        return max(cands, key=lambda c: c.population or 0)
    return None


def _nearest(cands: list[Place], context: list[Place]) -> Place | None:
    """The candidate far nearer (:data:`NEARER` times) to the other places than any other candidate."""
    dist = sorted((min(haversine_m(c.lat, c.lon, p.lat, p.lon) for p in context), i) for i, c in enumerate(cands))
    if len(dist) >= 2 and dist[0][0] * NEARER <= dist[1][0]:
        return cands[dist[0][1]]
    return None


Why = tuple[str, dict[str, object]]  # an i18n key (``place.why.*``) and its parameters; ("", {}) for none
_NO_WHY: Why = ("", {})


def _near_ref(place: Place, context: list[Place]) -> tuple[Place, float]:
    """The context place nearest to ``place`` and its distance in km."""
    ref = min(context, key=lambda p: haversine_m(place.lat, place.lon, p.lat, p.lon))
    return ref, haversine_m(place.lat, place.lon, ref.lat, ref.lon) / 1000


def _why_near(key: str, place: Place, context: list[Place], lang: str) -> Why:
    """``key`` with the context place nearest to ``place`` (``{place}``) and the distance (``{km}``)."""
    ref, km = _near_ref(place, context)
    country = ((place.country_name_zh if lang == "zh" else "") or place.country_name or place.country)
    return key, {"place": ref.display_name(lang), "km": f"{km:,.0f}", "country": country}


def _decide_why(cands: list[Place], context: list[Place], lang: str) -> tuple[Place | None, Why]:
    """:func:`_decide` with the reason for its pick (see the module docstring for the order)."""
    if not cands:
        return None, _NO_WHY
    if len(cands) == 1:
        return cands[0], ("place.why.only", {})
    countries = {p.country for p in context} - {""}
    if countries:
        same = [c for c in cands if c.country in countries]
        pick: Place | None = None
        why = _NO_WHY
        if len(same) == 1:
            pick, why = same[0], _why_near("place.why.same_country", same[0], context, lang)
        elif same and (p := _dominant(same, ratio=SAME_COUNTRY)) is not None:
            pick, why = p, _why_near("place.why.largest_in_country", p, context, lang)
        elif same and (p := _nearest(same, context)) is not None:
            pick, why = p, _why_near("place.why.nearest", p, context, lang)
        elif same and (p := _hub(same)) is not None:
            pick, why = p, ("place.why.hub", {})
        if pick is not None:
            # the context and a far larger namesake disagree ("Paris" beside "Springfield, Illinois"): ask
            rival = _dominant(cands, ratio=CONFLICT)
            return (None, _NO_WHY) if rival is not None and rival is not pick else (pick, why)
    continents = {_GAZ.country_facts(p.country)[0] for p in context} - {""}
    if continents:
        near = [c for c in cands if _GAZ.country_facts(c.country)[0] in continents]
        if len(near) == 1 and len(cands) > 1:
            return near[0], _why_near("place.why.same_region", near[0], context, lang)
    if lang == "zh":
        cn = [c for c in cands if c.country == "CN"]
        if len(cn) == 1:
            return cn[0], ("place.why.language", {})
        if cn:
            if (p := _dominant(cn, ratio=SAME_COUNTRY)) is not None:
                return p, ("place.why.language_largest", {})
            return (p, ("place.why.hub", {})) if (p := _hub(cn)) is not None else (None, _NO_WHY)
    if (p := _dominant(cands)) is not None:
        return p, ("place.why.largest", {"population": f"{p.population or 0:,}"})
    return (p, ("place.why.hub", {})) if (p := _hub(cands)) is not None else (None, _NO_WHY)


def _decide(cands: list[Place], context: list[Place], lang: str) -> Place | None:
    return _decide_why(cands, context, lang)[0]


def dominant_place(cands: list[Place]) -> Place | None:
    """The candidate that needs no context: the only one, or one :data:`DOMINANCE` times the next by population."""
    return _dominant(cands)


@dataclass
class PlaceRanking:
    """The candidates of one name ranked by context (:func:`rank_places`)."""

    places: list[Place]  # best first
    decided: bool  # the context leaves no real doubt: ``places[0]`` is the place
    why: Why  # why ``places[0]`` is first (an i18n key and its parameters)
    km: list[float | None] = field(default_factory=list)  # each candidate's distance to the nearest context place


def rank_places(cands: list[Place], context: list[Place], lang: str, *, strict: bool = False) -> PlaceRanking:
    """``cands`` ordered by the other places of the request (``context``): the same country first, then the
    same continent, then the distance to the nearest of them, then the input's language (Chinese → China),
    then population. ``decided`` when :func:`_decide_why` (the rule :func:`resolve_mentions` uses) is sure;
    its pick then comes first whatever the order. ``why`` names the reason ``places[0]`` is first.
    ``strict`` (the Route page): an airport alone, with no other place to go by, decides nothing."""
    context = [p for p in context if p is not None]
    countries = {p.country for p in context} - {""}
    continents = {_GAZ.country_facts(p.country)[0] for p in context} - {""}

    def km(c: Place) -> float | None:
        return _near_ref(c, context)[1] if context else None

    def key(c: Place) -> tuple[int, float, int, int]:
        # one tier for "the same country or region (continent) as another place", then the distance
        tier = 0 if c.country in countries or _GAZ.country_facts(c.country)[0] in continents else 1
        lang_match = 0 if lang != "zh" or c.country == "CN" else 1
        return tier, km(c) or 0.0, lang_match, -(c.population or 0)

    ordered = sorted(cands, key=key)
    pick, why = _decide_why(cands, context, lang)
    if strict and not context and why[0] == "place.why.hub":
        pick, why = None, _NO_WHY
    def beats(near: Place, far: Place) -> bool:
        """``near`` is so much nearer to the other places that it outweighs ``far``'s size: at least
        :data:`NEARER` times nearer, and as many times nearer as ``far`` is larger."""
        ratio = max(NEARER, (far.population or 0) / max(near.population or 0, 1))
        return (km(near) or 0.0) * ratio <= (km(far) or 0.0)

    if strict and pick is not None and why[0] == "place.why.largest_in_country":
        # population says one namesake, distance another ("Portland" between Boston and New York)
        if any(beats(c, pick) for c in cands if c.country == pick.country and c is not pick):
            pick, why = None, _NO_WHY
    if strict and pick is None and context:
        # several candidates share a country or continent with the other places, and one of them is far
        # nearer to them than the rest ("Paris" beside London and Springfield, Massachusetts): that one
        supported = [c for c in ordered if key(c)[0] == 0]
        if len(supported) >= 2 and all(beats(supported[0], c) for c in supported[1:]):
            pick, why = supported[0], _why_near("place.why.nearest", supported[0], context, lang)
    if pick is not None:
        ordered = [pick] + [c for c in ordered if c is not pick]
    elif len(ordered) >= 2:
        first, second = key(ordered[0]), key(ordered[1])
        if first[0] < second[0]:
            why = _why_near("place.why.same_country" if ordered[0].country in countries else "place.why.same_region",
                            ordered[0], context, lang)
        elif context:
            why = _why_near("place.why.nearest", ordered[0], context, lang)
        elif first[2] < second[2]:
            why = ("place.why.language", {})
        else:
            why = ("place.why.larger", {"population": f"{ordered[0].population or 0:,}"})
    return PlaceRanking(places=ordered, decided=pick is not None, why=why, km=[km(c) for c in ordered])


def resolve_mentions(mentions: list[Mention], provider: PlaceProvider, *, lang: str,
                     fixed: dict[str, Place] | None = None) -> PlaceReading:
    """Resolve origin/destination mentions together (see the module docstring).

    ``fixed`` holds places already known from earlier in the conversation (they are context too).
    """
    reading = PlaceReading(mentions=list(mentions))
    cands = {m.role: _candidates(m, provider) for m in mentions}
    chosen: dict[str, Place] = dict(fixed or {})
    # first the places that are certain on their own, then the rest with them as context
    for m in mentions:
        if (p := _dominant(cands[m.role])) is not None and len(cands[m.role]) == 1:
            chosen[m.role] = p
    for _ in range(2):
        for m in mentions:
            if m.role in chosen and m.role not in (fixed or {}):
                continue
            context = [p for role, p in chosen.items() if role != m.role]
            if (p := _decide(cands[m.role], context, lang)) is not None:
                chosen[m.role] = p
    for m in mentions:
        setattr(reading, f"{m.role}_text", m.text)
        place = chosen.get(m.role)
        if place is not None and (m.role not in (fixed or {}) or cands[m.role]):
            setattr(reading, m.role, place)
            continue
        options = cands[m.role]
        if options:
            reading.ambiguities.append(Ambiguity(
                field=m.role, text=m.text, reason="understand.amb.place_ambiguous",
                candidates=[_option_text(p, lang) for p in options[:6]], places=options[:6]))
        elif (cities := _GAZ.country_cities(m.text)) and "country" in _known(m.text):
            reading.ambiguities.append(Ambiguity(  # "去日本玩": which city of the country
                field=m.role, text=m.text, reason="understand.amb.country",
                candidates=[_option_text(p, lang) for p in cities], places=cities))
        else:
            suggest = getattr(provider, "suggest", None)
            near: list[Place] = []
            if suggest is not None:
                try:
                    near = list(suggest(m.text, limit=4))
                except ProviderError:
                    near = []
            reading.ambiguities.append(Ambiguity(
                field=m.role, text=m.text, reason="understand.amb.place_unknown",
                candidates=[_option_text(p, lang) for p in near], places=near))
    return reading


def _option_text(place: Place, lang: str) -> str:
    """A quick reply that resolves back to ``place`` ("Springfield, Illinois, United States")."""
    return place_to_text(place) if place.source == "latlon" else place.label_in(lang)
