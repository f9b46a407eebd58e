"""Rule extractors for travel requests, Chinese and English (no LLM, no network).

Every function takes the raw user text and returns plain values; the models and the
orchestration live in :mod:`navigo_core.planner.request`.

* :func:`parse_dates` — absolute and relative dates, ranges and durations.
* :func:`parse_budget` — amount, ISO currency, per-person flag.
* :func:`parse_travellers` — adults / children.
* :func:`place_phrases` — origin / destination phrases (resolved by the caller).
* :func:`parse_interests` — canonical interest ids from the lexicon ``data/interests.yaml``.

Date conventions (``today`` is always passed in):

* a month/day without a year is its next occurrence on or after ``today``; the end of
  a range is the next occurrence on or after the start;
* "this Friday" / "周五" / "本周五": the first Friday on or after today; "next Friday" /
  "下周五": the Friday of the next Monday-based week;
* "this weekend" / "这周末": the coming Saturday–Sunday (today if it is Sunday);
  "next weekend" / "下周末": Saturday–Sunday of the next week;
* a duration ("3 days", "玩三天", "for a week", "3天2晚", "2 nights") gives end = start + n − 1
  (n nights → n + 1 days).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

import yaml

__all__ = [
    "BudgetResult", "DateResult", "TravellerResult", "currency_code", "normalize_text", "parse_budget",
    "parse_dates", "parse_interests", "parse_number", "parse_travellers", "place_phrases", "zh_number",
]

_DATA = Path(__file__).parent / "data"

# --- numbers -------------------------------------------------------------------

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000}
_EN_NUMBERS = {"one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14,
               "couple": 2, "pair": 2}
ZH_NUM = r"[零〇一二两俩三四五六七八九十百千万]+"
EN_NUM = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|an?)"


def zh_number(text: str) -> int | None:
    """``三`` → 3, ``十二`` → 12, ``二十`` → 20, ``六千`` → 6000, ``一万五`` → 15000; None if not a numeral."""
    if not text or any(c not in _ZH_DIGITS and c not in _ZH_UNITS for c in text):
        return None
    total, section, digit = 0, 0, None
    last_unit = 1
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        else:
            unit = _ZH_UNITS[ch]
            if unit == 10_000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
            last_unit = unit
    if digit is not None:  # 一万五 → 15000, 三千五 → 3500
        if last_unit >= 100 and len(text) >= 2 and text[-2] in _ZH_UNITS:
            section += digit * (last_unit // 10 if last_unit != 10_000 else 1000)
        else:
            section += digit
    return total + section


def parse_number(token: str) -> int | None:
    """An int from digits, a Chinese numeral or an English number word (``a``/``an`` = 1)."""
    token = token.strip().lower()
    if token.isdigit():
        return int(token)
    if token in _EN_NUMBERS:
        return _EN_NUMBERS[token]
    return zh_number(token)


def normalize_text(text: str) -> str:
    """NFKC (full-width digits and punctuation folded), whitespace collapsed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text or "")).strip()


# --- dates ---------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
MONTH_NAMES = frozenset(_MONTHS)
_MONTH_RE = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_WEEKDAYS_EN = {"monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
                "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
                "sunday": 6, "sun": 6}
WEEKDAY_NAMES = frozenset(_WEEKDAYS_EN)
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_ZH_DAY = rf"(\d{{1,2}}|{ZH_NUM})"
_RANGE_SEP = r"\s*(?:-|–|—|~|～|to|until|till|through|thru|到|至|—)\s*"


@dataclass
class DateResult:
    start: date | None = None
    end: date | None = None
    duration_days: int | None = None  # a duration mentioned (whether or not a start was found)
    notes: list[str] = field(default_factory=list)


def _next_occurrence(month: int, day: int, after: date) -> date | None:
    for year in (after.year, after.year + 1):
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if d >= after:
            return d
    return None


def _make(year: int | None, month: int, day: int, after: date) -> date | None:
    if year is not None:
        try:
            return date(year, month, day)
        except ValueError:
            return None
    return _next_occurrence(month, day, after)


def _weekday_date(today: date, weekday: int, *, next_week: bool) -> date:
    if next_week:
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _duration(text: str) -> int | None:
    """Trip length in days from "3 days", "玩三天", "for a week", "3天2晚", "2 nights", "两周"."""
    low = text.lower()
    m = re.search(rf"({EN_NUM}|\d+)[ -]?(?:days?|day trip)\b", low)
    if m and (n := parse_number(m.group(1))):
        return n
    m = re.search(rf"(\d+|{ZH_NUM})\s*(?:天|日游|日)(?!\s*(?:后|之后|以后))", text)
    if m and (n := parse_number(m.group(1))) and not re.search(rf"月\s*{re.escape(m.group(1))}\s*日", text):
        return n
    m = re.search(rf"({EN_NUM}|\d+)[ -]?weeks?\b", low)
    if m and (n := parse_number(m.group(1))):
        return 7 * n
    m = re.search(rf"(\d+|{ZH_NUM})\s*(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天末])", text)
    if m and (n := parse_number(m.group(1))):
        return 7 * n
    m = re.search(rf"({EN_NUM}|\d+)[ -]?nights?\b", low) or re.search(rf"(\d+|{ZH_NUM})\s*(?:晚|夜)", text)
    if m and (n := parse_number(m.group(1))):
        return n + 1
    return None


def _absolute_dates(text: str, low: str, today: date) -> list[tuple[int, date | None, str]]:
    """Every absolute date as (position, date, kind); kind "range_end" marks the end of a range."""
    found: list[tuple[int, date | None, str]] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    # ISO and numeric: 2026-05-01, 2026/5/1, 2026.05.01, 2026年5月1日
    for m in re.finditer(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号]?", text):
        d = _make(int(m.group(1)), int(m.group(2)), int(m.group(3)), today)
        found.append((m.start(), d, "date"))
        taken.append(m.span())
    # Chinese month/day with an optional range: 5月1日到5日, 5月1日至5月5日, 5月1-5日, 五月一号
    zh = rf"{_ZH_DAY}\s*月\s*{_ZH_DAY}\s*[日号]?(?:{_RANGE_SEP}(?:{_ZH_DAY}\s*月\s*)?{_ZH_DAY}\s*[日号])?"
    for m in re.finditer(zh, text):
        if not free(*m.span()):
            continue
        month, day = parse_number(m.group(1)), parse_number(m.group(2))
        if not month or not day:
            continue
        start = _make(None, month, day, today)
        found.append((m.start(), start, "date"))
        if m.group(4):
            end_month = parse_number(m.group(3)) if m.group(3) else month
            end_day = parse_number(m.group(4))
            if end_month and end_day:
                found.append((m.start(4), _make(None, end_month, end_day, start or today), "range_end"))
        taken.append(m.span())
    # English: May 1-5, May 1 to May 5, May 1st to June 3rd, 1 May - 5 May, May 1, 2026
    en = (rf"\b({_MONTH_RE})\.?\s+{_DAY}(?:,?\s+(\d{{4}}))?\b"
          rf"(?:{_RANGE_SEP}(?:({_MONTH_RE})\.?\s+)?{_DAY}(?:,?\s+(\d{{4}}))?\b)?")
    for m in re.finditer(en, low):
        if not free(*m.span()):
            continue
        month = _MONTHS[m.group(1).rstrip(".")[:4] if m.group(1).startswith("sept") else m.group(1)[:3]]
        year = int(m.group(3)) if m.group(3) else None
        start = _make(year, month, int(m.group(2)), today)
        found.append((m.start(), start, "date"))
        if m.group(5):
            end_month = _MONTHS[m.group(4)[:3]] if m.group(4) else month
            end_year = int(m.group(6)) if m.group(6) else None
            found.append((m.start(5), _make(end_year, end_month, int(m.group(5)), start or today), "range_end"))
        taken.append(m.span())
    en_dm = rf"\b{_DAY}(?:\s+of)?\s+({_MONTH_RE})\b(?:{_RANGE_SEP}{_DAY}(?:\s+of)?\s+({_MONTH_RE})\b)?"
    for m in re.finditer(en_dm, low):
        if not free(*m.span()):
            continue
        month = _MONTHS[m.group(2)[:3]]
        start = _make(None, month, int(m.group(1)), today)
        found.append((m.start(), start, "date"))
        if m.group(3):
            found.append((m.start(3), _make(None, _MONTHS[m.group(4)[:3]], int(m.group(3)), start or today),
                          "range_end"))
        taken.append(m.span())
    return found


def _relative_dates(text: str, low: str, today: date) -> list[tuple[int, date, date | None]]:
    """Relative mentions as (position, start, end-or-None)."""
    out: list[tuple[int, date, date | None]] = []
    for word, offset in (("day after tomorrow", 2), ("tomorrow", 1), ("today", 0), ("tonight", 0)):
        for m in re.finditer(rf"\b{word}\b", low):
            if word == "tomorrow" and low[max(0, m.start() - 10):m.start()].endswith("after "):
                continue
            out.append((m.start(), today + timedelta(days=offset), None))
    for word, offset in (("大后天", 3), ("后天", 2), ("明天", 1), ("明日", 1), ("今天", 0), ("今日", 0), ("今晚", 0)):
        for m in re.finditer(word, text):
            if word == "后天" and text[max(0, m.start() - 1):m.start()] == "大":
                continue
            out.append((m.start(), today + timedelta(days=offset), None))
    for m in re.finditer(r"\b(this|next|coming)\s+weekend\b|\bweekend\b", low):
        nxt = m.group(1) == "next"
        sat = _weekday_date(today, 5, next_week=nxt)
        if not nxt and today.weekday() == 6:
            sat = today - timedelta(days=1)
        out.append((m.start(), max(sat, today), sat + timedelta(days=1)))
    for m in re.finditer(r"(这|本|下|下个|下一)?(?:周|星期|礼拜)末", text):
        nxt = bool(m.group(1) and m.group(1).startswith("下"))
        sat = _weekday_date(today, 5, next_week=nxt)
        if not nxt and today.weekday() == 6:
            sat = today - timedelta(days=1)
        out.append((m.start(), max(sat, today), sat + timedelta(days=1)))
    for m in re.finditer(r"\b(this|next|coming|on)?\s*(" + "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True))
                         + r")\b", low):
        if m.group(1) is None and len(m.group(2)) <= 3:
            continue  # a bare "sun"/"sat"/"wed" is too ambiguous
        out.append((m.start(2), _weekday_date(today, _WEEKDAYS_EN[m.group(2)], next_week=m.group(1) == "next"),
                    None))
    for m in re.finditer(r"(这|本|下|下个|下一)?(?:周|星期|礼拜)([一二三四五六日天])", text):
        nxt = bool(m.group(1) and m.group(1).startswith("下"))
        out.append((m.start(), _weekday_date(today, _WEEKDAYS_ZH[m.group(2)], next_week=nxt), None))
    for m in re.finditer(rf"\bin\s+({EN_NUM})\s+days?\b", low):
        if (n := parse_number(m.group(1))) is not None:
            out.append((m.start(), today + timedelta(days=n), None))
    for m in re.finditer(rf"(\d+|{ZH_NUM})\s*天(?:后|之后|以后)", text):
        if (n := parse_number(m.group(1))) is not None:
            out.append((m.start(), today + timedelta(days=n), None))
    return out


def parse_dates(text: str, today: date) -> DateResult:
    """Start/end dates and a duration from ``text`` (see the module docstring for the conventions)."""
    text = normalize_text(text)
    low = text.lower()
    result = DateResult(duration_days=_duration(text))
    absolute = _absolute_dates(text, low, today)
    relative = _relative_dates(text, low, today)
    if absolute:
        absolute.sort(key=lambda x: x[0])
        if any(d is None for _, d, _ in absolute):
            result.notes.append("request.note.bad_date")
        dates = [(pos, d, kind) for pos, d, kind in absolute if d is not None]
        if dates:
            result.start = dates[0][1]
            if len(dates) > 1:
                result.end = dates[1][1]
    elif relative:
        relative.sort(key=lambda x: x[0])
        result.start, result.end = relative[0][1], relative[0][2]
        if result.end is None and len(relative) > 1 and relative[1][1] >= result.start:
            result.end = relative[1][1]
    if result.start and result.end is None and result.duration_days:
        result.end = result.start + timedelta(days=result.duration_days - 1)
    if result.start and result.end and result.end < result.start:
        result.notes.append("request.note.end_before_start")
        result.end = None
    return result


# --- budget --------------------------------------------------------------------

_CURRENCY_WORDS = {
    "元": "CNY", "块": "CNY", "块钱": "CNY", "人民币": "CNY", "rmb": "CNY", "cny": "CNY", "yuan": "CNY", "¥": "CNY",
    "￥": "CNY", "usd": "USD", "$": "USD", "us$": "USD", "dollar": "USD", "dollars": "USD", "bucks": "USD",
    "美元": "USD", "美金": "USD", "刀": "USD", "eur": "EUR", "€": "EUR", "euro": "EUR", "euros": "EUR",
    "欧元": "EUR", "gbp": "GBP", "£": "GBP", "pound": "GBP", "pounds": "GBP", "英镑": "GBP", "jpy": "JPY",
    "yen": "JPY", "円": "JPY", "日元": "JPY", "日币": "JPY", "hkd": "HKD", "hk$": "HKD", "港币": "HKD",
    "港元": "HKD", "krw": "KRW", "韩元": "KRW", "won": "KRW", "thb": "THB", "泰铢": "THB", "baht": "THB",
    "sgd": "SGD", "新币": "SGD", "aud": "AUD", "澳元": "AUD", "cad": "CAD", "加元": "CAD", "chf": "CHF",
    "twd": "TWD", "新台币": "TWD",
}
ISO_CURRENCIES = frozenset(_CURRENCY_WORDS.values())
_CUR_AFTER = ("块钱|人民币|美元|美金|欧元|英镑|日元|日币|港币|港元|韩元|泰铢|新台币|新币|澳元|加元|元|块|刀|円|"
              r"rmb|cny|yuan|usd|dollars?|bucks|eur|euros?|gbp|pounds?|jpy|yen|hkd|krw|won|thb|baht|sgd|aud|"
              r"cad|chf|twd")
_CUR_BEFORE = r"us\$|hk\$|[$€£¥￥]|rmb|cny|usd|eur|gbp|jpy|hkd|sgd|aud|cad|chf"
_AMOUNT = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_SCALE = r"\s*(k|K|千|万|w|W|thousand)?"
_PER_PERSON = re.compile(r"人均|每人|每个人|一人|per person|per head|each person|a person|/person|pp\b|each\b",
                         re.IGNORECASE)


@dataclass
class BudgetResult:
    amount: float
    currency: str | None  # ISO code; None when the text gave none
    per_person: bool = False


def currency_code(word: str) -> str | None:
    """ISO 4217 code for a currency word or symbol (元 → CNY, $ → USD, € → EUR …); None if unknown."""
    w = word.strip().lower()
    if w.upper() in ISO_CURRENCIES:
        return w.upper()
    return _CURRENCY_WORDS.get(w)


def _scaled(amount: str, scale: str | None) -> float:
    value = float(amount.replace(",", ""))
    if scale:
        value *= {"k": 1000, "千": 1000, "thousand": 1000, "万": 10_000, "w": 10_000}[scale.lower()]
    return value


def parse_budget(text: str) -> BudgetResult | None:
    """The budget in ``text``: "预算6000元", "$3,000", "3k EUR", "budget of 5000 yuan", "人均2000", "预算六千"."""
    text = normalize_text(text)
    # Chinese numerals after a budget word: 预算六千元, 人均两千
    zh_m = re.search(rf"(预算|人均|每人|花费|经费)\s*(?:是|为|大概|大约|约|在|控制在)?\s*({ZH_NUM})\s*({_CUR_AFTER})?",
                     text)
    candidates: list[tuple[int, BudgetResult]] = []
    for m in re.finditer(rf"({_CUR_BEFORE})\s*{_AMOUNT}{_SCALE}", text, re.IGNORECASE):
        candidates.append((m.start(), BudgetResult(_scaled(m.group(2), m.group(3)), currency_code(m.group(1)))))
    for m in re.finditer(rf"{_AMOUNT}{_SCALE}\s*({_CUR_AFTER})(?![a-z])", text, re.IGNORECASE):
        if any(abs(pos - m.start()) < 3 for pos, _ in candidates):
            continue
        candidates.append((m.start(), BudgetResult(_scaled(m.group(1), m.group(2)), currency_code(m.group(3)))))
    if not candidates:
        m = re.search(rf"(?:预算|经费|花费|人均|每人|budget(?:\s+(?:of|is|around|about|under|up to))?|"
                      rf"spend(?:\s+(?:about|around|up to))?)\s*[:：]?\s*(?:是|为|大概|大约|约|在|控制在)?\s*{_AMOUNT}{_SCALE}",
                      text, re.IGNORECASE)
        if m:
            candidates.append((m.start(), BudgetResult(_scaled(m.group(1), m.group(2)), None)))
        elif zh_m and (n := zh_number(zh_m.group(2))) and n >= 10:
            candidates.append((zh_m.start(), BudgetResult(float(n), currency_code(zh_m.group(3) or "") if
                                                          zh_m.group(3) else None)))
    if not candidates:
        return None
    pos, result = min(candidates, key=lambda c: c[0])
    window = text[max(0, pos - 8):pos + 24]
    result.per_person = bool(_PER_PERSON.search(window))
    return result


# --- travellers ----------------------------------------------------------------

@dataclass
class TravellerResult:
    adults: int | None = None
    children: int | None = None


_ADULT_ZH = r"(?:大人|成人|成年人)"
_CHILD_ZH = r"(?:小孩子?|孩子|儿童|小朋友|娃|宝宝|小孩儿)"


def parse_travellers(text: str) -> TravellerResult:
    """Adults and children: "两个大人一个小孩", "2 adults 1 kid", "a family of four", "我们三个人", "solo"."""
    text = normalize_text(text)
    low = text.lower()
    res = TravellerResult()
    if m := re.search(rf"(\d+|{ZH_NUM})\s*(?:个|位|名)?\s*{_ADULT_ZH}", text):
        res.adults = parse_number(m.group(1))
    if m := re.search(rf"(\d+|{ZH_NUM})\s*(?:个|位|名)?\s*{_CHILD_ZH}", text):
        res.children = parse_number(m.group(1))
    if m := re.search(rf"\b({EN_NUM})\s+(?:adults?|grown-?ups?)\b", low):
        res.adults = parse_number(m.group(1))
    if m := re.search(rf"\b({EN_NUM})\s+(?:kids?|children|child|toddlers?|teens?|teenagers?|little ones?)\b", low):
        res.children = parse_number(m.group(1))
    if res.adults is not None or res.children is not None:
        if res.children is None and (res.adults is not None):
            res.children = 0 if not re.search(r"kid|child|孩|儿童|娃|宝宝", low) else None
        return res
    # family size: 一家三口 / a family of four → 2 adults + the rest children
    m = re.search(rf"一家\s*({ZH_NUM}|\d+)\s*口", text) or re.search(rf"\bfamily of ({EN_NUM})\b", low)
    if m and (n := parse_number(m.group(1))):
        return TravellerResult(adults=min(2, n), children=max(0, n - 2))
    # a group size: 我们三个人 / 3 people / we are four / party of 3
    m = (re.search(rf"(?:我们|一共|总共|共)?\s*(\d+|{ZH_NUM})\s*(?:个|位|名)\s*(?:人|朋友|同事|同学)", text)
         or re.search(rf"\b({EN_NUM})\s+(?:people|persons|travell?ers|adults|friends|of us|pax|guests)\b", low)
         or re.search(rf"\b(?:we are|we're|party of|group of)\s+({EN_NUM})\b", low))
    if m and (n := parse_number(m.group(1))):
        return TravellerResult(adults=n, children=0 if n == 1 else None)
    if re.search(r"(?:我)?一个人|独自|自己去|独行|单人", text) or re.search(
            r"\b(?:solo|alone|by myself|on my own|just me|single traveller)\b", low):
        return TravellerResult(adults=1, children=0)
    if re.search(r"情侣|夫妻|两口子|和(?:我)?(?:老婆|老公|女朋友|男朋友|女友|男友|爱人|对象)|我们俩|我俩", text) or re.search(
            r"\b(?:couple|honeymoon|my (?:wife|husband|partner|girlfriend|boyfriend) and i|"
            r"me and my (?:wife|husband|partner|girlfriend|boyfriend))\b", low):
        return TravellerResult(adults=2, children=0)
    return res


# --- places --------------------------------------------------------------------

_ZH_STOP = r"[，,。.!！?？;；、\s\d]|出发|玩|旅游|旅行|度假|看看|逛逛|待|呆|过|住|转转|游玩|自驾|坐|乘|飞|的|预算|喜欢|然后|和|跟|两个|一个"
_ZH_RUN = r"[\u4e00-\u9fff]{2,12}"
_EN_STOPWORDS = frozenset({"i", "we", "me", "my", "our", "the", "a", "an", "and", "budget", "with", "for", "on",
                           "in", "at", "this", "next", "from", "to", "tomorrow", "today", "weekend", "adults",
                           "kids", "solo", "days", "day", "week", "there", "see", "visit"}) | MONTH_NAMES | WEEKDAY_NAMES
_CURRENCY_CODES = frozenset(c for c in ISO_CURRENCIES) | {"RMB"}
_EN_PARTICLES = frozenset({"de", "la", "le", "los", "las", "del", "da", "do", "upon", "on"})


_ZH_TIME = re.compile(r"周|星期|礼拜|月|号|[今明后昨]天|早上|晚上|上午|下午|中午|凌晨|假期|节")


def _zh_trim(run: str) -> str:
    """The place-like head of a CJK run: cut at the first stop word ("杭州玩三天" → "杭州"); "" for time words."""
    m = re.search(_ZH_STOP, run)
    head = run[:m.start()] if m else run
    return "" if _ZH_TIME.search(head) else head


def _en_phrase(text: str, start: int) -> str:
    """Up to three capitalised words or an IATA code starting at ``start`` ("New York", "PVG")."""
    segment = re.split(r"[,;:!?()\n]|\.(?:\s|$)", text[start:], maxsplit=1)[0]
    words: list[str] = []
    for word in segment.split():
        if not words and re.fullmatch(r"[A-Z]{3}", word):
            return "" if word in _CURRENCY_CODES else word
        if word.lower() in _EN_STOPWORDS or not (word[:1].isupper() or (words and word.lower() in _EN_PARTICLES)):
            break
        words.append(word)
        if len(words) == 3:
            break
    while words and words[-1].lower() in _EN_PARTICLES:
        words.pop()
    return " ".join(words)


def place_phrases(text: str) -> tuple[str, str]:
    """(origin phrase, destination phrase) as written; "" when absent.

    Chinese: "从上海出发去杭州", "上海出发去杭州", "从上海到杭州", "去杭州"; English: "from Shanghai to
    Hangzhou", "fly to Tokyo from PVG", "to Hangzhou", "trip to Tokyo"; IATA codes must be upper case.
    """
    text = normalize_text(text)
    origin = dest = ""
    # Chinese
    m = re.search(rf"从\s*({_ZH_RUN}?)\s*(?:出发)?\s*[，,]?\s*(?:去|到|飞往|飞到|飞|前往|坐高铁去|开车去)\s*({_ZH_RUN})", text)
    if m:
        origin, dest = _zh_trim(m.group(1)), _zh_trim(m.group(2))
    else:
        m = re.search(rf"({_ZH_RUN})\s*出发\s*[，,]?\s*(?:去|到|飞往|飞到|飞|前往)?\s*({_ZH_RUN})?", text)
        if m:
            origin = _zh_trim(re.sub(r"^.*?(?:我们|我|从|在)", "", m.group(1)))
            if m.group(2):
                dest = _zh_trim(m.group(2))
        if not dest:
            for m in re.finditer(rf"(?:去|到|前往|飞往|飞到|想去|游览?)\s*({_ZH_RUN})", text):
                cand = _zh_trim(m.group(1))
                if len(cand) >= 2:
                    dest = cand
                    break
        if not dest:  # "杭州之旅", "杭州三日游", "规划杭州行"
            m = re.search(r"(?:规划|安排|计划)?(?:一次|一趟|个)?([\u4e00-\u9fff]{2,6}?)(?:之旅|[一二三四五六七八九十\d]+日游|自由行|游)", text)
            cand = re.sub(r"^.*(?:规划|安排|计划|一次|一趟|帮我|我们|我想|我要)", "", m.group(1)) if m else ""
            if len(cand) >= 2 and not re.search(r"旅|游|出差|行程", cand):
                dest = _zh_trim(cand)
        if not origin and (m := re.search(rf"从\s*({_ZH_RUN})", text)):
            origin = _zh_trim(m.group(1))
    # English (case-sensitive: proper nouns and IATA codes)
    if not origin:
        for m in re.finditer(r"\b[Ff]rom\s+", text):
            phrase = _en_phrase(text, m.end())
            if phrase:
                origin = phrase
                break
    if not dest:
        for m in re.finditer(r"\b(?:[Tt]o|[Vv]isit(?:ing)?|[Ii]n|[Ee]xplore|[Ss]ee)\s+", text):
            phrase = _en_phrase(text, m.end())
            if phrase and phrase != origin:
                dest = phrase
                break
    return origin, dest


# --- interests -----------------------------------------------------------------

from navigo_core.understand.interests import canonical_interest, interest_lexicon, parse_interests  # noqa: E402,F401
