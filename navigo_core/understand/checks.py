"""Checks on a model's text before it is used: language, a question, the facts kept, no new places.

A model may phrase what the rules understood; it may not change it. Each check is a pure function
over text (no model, no network) and returns what it found wrong, so callers can fall back to their
deterministic text and say why in their logs:

* :func:`language_ok` — the text is written in the user's language (share of CJK letters).
* :func:`is_narration` — third-person narration about "the user" instead of a reply to them.
* :func:`has_question` — the text asks something ("?", "？", 吗/呢, 哪/什么/几/多少 …).
* :func:`missing_facts` — the numbers, dates and places of a :class:`Facts` that the text dropped
  (a date may be written "2026-05-01", "May 1", "1 May", "5月1日", or as the end of a range
  "May 1–5", "5月1日至5日"; a number "6000", "6,000", "6k", "6千", "六千", "0.6万").
* :func:`new_places` — place names the offline gazetteer knows that none of the allowed texts has.
* :func:`new_names` — other proper names the allowed texts do not have: capitalised words inside an
  English sentence ("the Great Wall", "Kinkakuji River"), Chinese words ending like a sight
  (…寺, …山, …湖, 长城, …博物馆). A heuristic: it may reject a harmless rewording, never the reverse
  of what the rules read; the caller then uses its own text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from navigo_core.providers.places import Place
from navigo_core.providers.places.gazetteer import GazetteerPlaceProvider
from navigo_core.understand.dates import MONTH_NAMES, WEEKDAY_NAMES, parse_dates
from navigo_core.understand.numbers import zh_number
from navigo_core.understand.places import _common_words

__all__ = ["Facts", "has_question", "is_narration", "language_ok", "missing_facts", "new_names", "new_places",
           "numbers_in", "place_names", "script_lang"]

_GAZ = GazetteerPlaceProvider()
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_EN_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_EN_NUMBERS.update({"a couple": 2, "couple": 2, "pair": 2, "single": 1, "solo": 1, "alone": 1})

_NARRATION = re.compile(
    r"\b(?:the|this|our)\s+(?:user|customer|traveller|traveler|client)\b(?!\s*(?:'s\s+)?(?:name|account))|"
    r"\buser\s+(?:wants|would|is|has|needs|asked|requests|plans)\b|"
    r"用户(?:想|希望|要|计划|打算|需要|表示|提到|说|询问|的需求|的请求)|该用户|这位用户", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]|吗[\s。！!]*$|呢[\s。！!]*$|[吗呢][。，,]|请问|是否|哪|什么|几|多少|多久|怎么|要不要|有没有",
                       re.MULTILINE)
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(k|千|万|w|thousand|grand)?(?![\d])", re.IGNORECASE)
_ZH_NUMERAL = re.compile(r"[零〇一二两俩三四五六七八九十百千万]+")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？:;：；\n]\s*|[\"“(（]\s*|[-*•]\s+|\d+[.)]\s+)$")
_CAPITALISED = re.compile(r"[A-Z][a-z\u00c0-\u024f'’\-]+(?:\s+[A-Z][a-z\u00c0-\u024f'’\-]+)*")
_ZH_SIGHT = re.compile(r"博物馆|古镇|古城|长城|老街|故居|大街|寺|庙|塔|宫|山|湖|河|江|岛|峰|洞|陵|桥")
_ZH_NOT_PLACE = re.compile(r"^[零〇一二两三四五六七八九十百千万\d]|日游|天|人|位|元|预算|行程|规划|成人|儿童|兴趣|日期|总|估算|费用|喝茶|徒步")
_ZH_SIGHT_COMMON = ("爬山", "登山", "上山", "下山", "山水", "游湖", "过河", "过桥", "宫殿", "江南", "湖泊", "河流", "寺庙",
                    "公园", "广场", "景区", "山区", "游山")
_NAME_OK = frozenset({"I", "NaviGo", "OK", "Okay"}) | {m.capitalize() for m in MONTH_NAMES} | {
    w.capitalize() for w in WEEKDAY_NAMES}


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "")


def script_lang(text: str) -> str:
    """``"zh"`` when CJK characters are at least 30 % of the letters, ``"en"`` when they are at most 20 %,
    else ``""`` (mixed, or no letters)."""
    cjk = len(_CJK.findall(text or ""))
    latin = len(_LETTER.findall(text or ""))
    total = cjk + latin
    if not total:
        return ""
    share = cjk / total
    return "zh" if share >= 0.3 else "en" if share <= 0.2 else ""


def language_ok(text: str, lang: str) -> bool:
    """``text`` is in ``lang`` (en or zh); a text without letters passes."""
    stripped = _strip_names(text)
    if not (_CJK.search(stripped) or _LETTER.search(stripped)):
        return True
    return script_lang(stripped) == lang


def _strip_names(text: str) -> str:
    """Text without ISO dates, codes and numbers (they say nothing about the language)."""
    return re.sub(r"\d{4}-\d{2}-\d{2}|\b[A-Z]{3}\b|\d+", " ", text or "")


def is_narration(text: str) -> bool:
    """The text talks about the user in the third person ("The user wants…", "用户想…")."""
    return bool(_NARRATION.search(_norm(text)))


def has_question(text: str, lang: str = "en") -> bool:
    """The text asks the user something."""
    s = _norm(text)
    if "?" in s or "？" in s:
        return True
    return lang == "zh" and bool(_QUESTION.search(s))


def numbers_in(text: str) -> set[float]:
    """Every number written in ``text``: digits (thousands separators allowed, "6k", "1.5万"), Chinese
    numerals, English number words up to twenty."""
    s = _norm(text)
    s = re.sub(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}(?!\d))", "", s)
    out: set[float] = set()
    for m in _NUMBER.finditer(s):
        value = float(m.group(1))
        unit = (m.group(2) or "").lower()
        out.add(value)
        if unit in ("k", "千", "thousand", "grand"):
            out.add(value * 1000)
        elif unit in ("万", "w"):
            out.add(value * 10_000)
    for m in _ZH_NUMERAL.finditer(s):
        if m.group(0) in ("十", "百", "千", "万"):
            continue  # a unit alone ("1.5万" was read above)
        numeral = zh_number(m.group(0))
        if numeral is not None:
            out.add(float(numeral))
    low = s.lower()
    for word, value in _EN_NUMBERS.items():
        if re.search(rf"\b{re.escape(word)}\b", low):
            out.add(float(value))
    return out


def place_names(place: Place | None, *texts: str | None) -> list[str]:
    """Every way a text may name ``place`` (English and Chinese names, as typed)."""
    names = [t for t in texts if t]
    if place is not None:
        names += [place.name, place.name_zh]
    return [n for n in dict.fromkeys(n.strip() for n in names) if n]


def _date_forms(d: date) -> list[str]:
    month = _MONTHS[d.month - 1]
    return [d.isoformat(), f"{d.month}月{d.day}日", f"{d.month}月{d.day}号", f"{month} {d.day}", f"{month[:3]} {d.day}",
            f"{d.day} {month}", f"{d.day} {month[:3]}", f"{d.month}/{d.day}/", f"{d.month:02d}-{d.day:02d}"]


def _has_date(low: str, d: date, start: date | None = None) -> bool:
    for form in _date_forms(d):
        if re.search(rf"(?<![\d-]){re.escape(form.lower())}(?!\d)", low):
            return True
    if start is not None and start != d:  # the end of a range: "May 1-5", "5月1日至5日", "1-5 May"
        sep = r"\s*(?:-|–|—|~|～|to|until|till|through|thru|至|到)\s*"
        for form in _date_forms(start):
            rx = rf"(?<![\d-]){re.escape(form.lower())}(?:日|号|st|nd|rd|th)?{sep}(?:{_MONTHS[d.month - 1][:3]}[a-z]*\s*|{d.month}月)?{d.day}(?!\d)"
            if re.search(rx, low):
                return True
        if re.search(rf"(?<!\d){start.day}{sep}{d.day}\s*(?:{_MONTHS[d.month - 1][:3]}|日|号)", low):
            return True
    return False


@dataclass
class Facts:
    """What a model's text must keep: places (each a list of accepted names), dates, numbers."""

    places: list[list[str]] = field(default_factory=list)
    dates: list[date] = field(default_factory=list)  # [start] or [start, end]
    numbers: list[float] = field(default_factory=list)


def missing_facts(text: str, facts: Facts) -> list[str]:
    """The facts ``text`` does not state (``"place:Hangzhou"``, ``"date:2026-05-05"``, ``"number:6000"``)."""
    s = _norm(text)
    low = s.lower()
    out: list[str] = []
    for names in facts.places:
        if names and not any(n.casefold() in low for n in names):
            out.append(f"place:{names[0]}")
    if facts.dates:
        start = facts.dates[0]
        ok = [_has_date(low, d, start if i else None) for i, d in enumerate(facts.dates)]
        if not all(ok):  # the project's own date reader, on the text as a whole
            got = parse_dates(s, start - timedelta(days=30))
            read = [got.start, got.end] if got.start else []
            ok = [a or (i < len(read) and read[i] == d) for i, (a, d) in enumerate(zip(ok, facts.dates))]
        out += [f"date:{d.isoformat()}" for d, good in zip(facts.dates, ok) if not good]
    found = numbers_in(s)
    for n in facts.numbers:
        if not any(abs(n - f) < 0.01 for f in found):
            out.append(f"number:{n:g}")
    return out


def _allowed(texts: Iterable[str]) -> str:
    return "\n".join(_norm(t) for t in texts if t).casefold()


def new_places(text: str, allowed: Iterable[str]) -> list[str]:
    """Place names of the offline gazetteer in ``text`` that no ``allowed`` text contains."""
    ok = _allowed(allowed)
    s = _norm(text)
    found: list[str] = []
    for run in _CJK_RUN.finditer(s):
        w, i = run.group(0), 0
        while i < len(w) - 1:
            for n in range(min(len(w) - i, 6), 1, -1):
                sub = w[i:i + n]
                kinds = _GAZ.name_kinds(sub)
                if kinds & {"city", "alias", "region"} and not _ZH_NOT_PLACE.search(sub):
                    if sub.casefold() not in ok:
                        found.append(sub)
                    i += n - 1
                    break
            i += 1
    words = list(re.finditer(r"[A-Za-z\u00c0-\u024f][A-Za-z\u00c0-\u024f'’.\-]*", s))
    i = 0
    while i < len(words):
        for n in (3, 2, 1):
            if i + n > len(words):
                continue
            span = s[words[i].start():words[i + n - 1].end()].rstrip(".'’-")
            if not span[0].isupper():
                continue
            if n == 1 and (len(span) < 4 or span.lower() in _common_words()):
                continue  # "West" of "West Lake", "Nice", "Split": words before names
            if _GAZ.name_kinds(span) & {"city", "region"} and span not in _NAME_OK:
                if span.casefold() not in ok:
                    found.append(span)
                i += n - 1
                break
        i += 1
    return list(dict.fromkeys(found))


def new_names(text: str, allowed: Iterable[str]) -> list[str]:
    """Proper names in ``text`` that no ``allowed`` text contains (see the module docstring)."""
    ok = _allowed(allowed)
    s = _norm(text)
    found: list[str] = []
    for m in _CAPITALISED.finditer(s):
        if _SENTENCE_START.search(s[:m.start()]) or m.start() == 0:
            words = m.group(0).split()
            if len(words) == 1:
                continue  # a capitalised first word is just a sentence start
            name = " ".join(words[1:]) if words[0].lower() in _COMMON_STARTS else m.group(0)
        else:
            name = m.group(0)
        parts = [p for p in name.split() if p not in _NAME_OK]
        if parts and not all(p.casefold() in ok for p in parts):
            found.append(name)
    for m in _ZH_SIGHT.finditer(s):
        suffix, end = m.group(0), m.end()
        first = 0 if len(suffix) > 1 else 1  # 长城 is a name alone; 山 needs a word before it
        run_start = max(m.start() - 3, 0)
        while run_start < m.start() and not _CJK.match(s[run_start]):
            run_start += 1
        options = [s[m.start() - k:end] for k in range(first, m.start() - run_start + 1)]
        if not options or any(o in ok for o in options):
            continue
        word = options[0] if first == 0 else options[min(1, len(options) - 1)]  # for the log: 长城, 金阁寺
        if any(c in word for c in _ZH_SIGHT_COMMON) or suffix in _ZH_SIGHT_COMMON:
            continue
        found.append(word)
    return list(dict.fromkeys(found))


_COMMON_STARTS = frozenset("a an the this that these those your our my we you it there here in on at for from "
                           "with and but so then enjoy visit explore see discover spend take start end".split())
