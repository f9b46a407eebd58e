"""Trip dates from text, Chinese and English (``today`` is always passed in).

Conventions
    * a month/day without a year is its next occurrence on or after ``today``; the end of a
      range is the next occurrence on or after the start; a year written on either side of a
      range applies to the other side too ("2027年1月20日到22日", "March 16th to March 18th, 2022");
    * "this Friday" / "周五": the first Friday on or after today; "next Friday" / "下周五": the
      Friday of the next Monday-based week;
    * "this weekend" / "这周末": the coming Saturday–Sunday; "next weekend" / "下周末": the
      Saturday–Sunday of the next week; "a long weekend": the coming Friday–Monday. These are
      *vague*: a later explicit date replaces them;
    * holidays (五一, 国庆, 春节, 清明, 端午, 中秋, Christmas, Easter, Thanksgiving, Golden Week)
      get their real dates (:mod:`.holidays`);
    * a duration ("3 days", "玩三天", "for a week", "3天2晚", "2 nights" = 3 days) sets the
      end from the start;
    * a month or season alone ("in April", "今年秋天", "下个月") decides no date: it becomes
      :attr:`DateResult.period`, and the caller asks, offering dates inside it;
    * a day of the month alone ("5号回来", "back on the 5th") is read against the start date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from navigo_core.understand.holidays import find_holiday, holiday_span
from navigo_core.understand.numbers import EN_NUM, ZH_NUM, normalize_text, parse_number

__all__ = ["MONTH_NAMES", "WEEKDAY_NAMES", "DateResult", "parse_dates", "period_options"]

_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_EN_MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                   "November", "December"]
MONTH_NAMES = frozenset(_MONTHS)
_MONTH_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
             r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_WEEKDAYS_EN = {"monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
                "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
                "sunday": 6, "sun": 6}
WEEKDAY_NAMES = frozenset(_WEEKDAYS_EN)
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_ZH_DAY = rf"(\d{{1,2}}|{ZH_NUM})"
_SEP = r"\s*(?:-|–|—|~|～|to|until|till|through|thru|and|到|至|—)\s*"
_YEAR = r"(\d{4})"
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2),
            "春天": (3, 5), "春季": (3, 5), "夏天": (6, 8), "夏季": (6, 8), "秋天": (9, 11), "秋季": (9, 11),
            "冬天": (12, 2), "冬季": (12, 2), "暑假": (7, 8), "寒假": (1, 2)}
_RETURN_CUE = re.compile(r"(?:回来|返回|回程|回|\bback|\breturn(?:ing)?|\bcome back|\bcoming back|\bhome)(?:\s+(?:on|by))?\s*$"
                         r"|^\s*(?:回来|返回|回)", re.IGNORECASE)


@dataclass
class DateResult:
    start: date | None = None
    end: date | None = None
    duration_days: int | None = None  # a duration mentioned (whether or not a start was found)
    vague: bool = False               # start/end come from loose words ("this weekend")
    relative: bool = False            # start/end come from relative words ("next Friday"), not written dates
    period: tuple[date, date] | None = None  # a month or season named without dates
    period_text: str = ""
    end_only: bool = False            # the text gives only a return date ("5号回来")
    notes: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)  # where the date words are


def _make(year: int | None, month: int, day: int, after: date) -> date | None:
    if year is not None:
        try:
            return date(year, month, day)
        except ValueError:
            return None
    for y in (after.year, after.year + 1):
        try:
            d = date(y, month, day)
        except ValueError:
            continue
        if d >= after:
            return d
    return None


def _range(y1: int | None, m1: int, d1: int, y2: int | None, m2: int, d2: int | None,
           today: date) -> tuple[date | None, date | None]:
    """A written range, the year on either side applying to both ("2027年1月20日到22日", "March 16th to 18th, 2022",
    "Dec 28 to Jan 3, 2028"); without a year, the start is the next occurrence and the end the next after it."""
    start = _make(y1 or (y2 - (1 if m2 < m1 else 0) if y2 else None), m1, d1, today)
    if d2 is None:
        return start, None
    end_year = y2 or (start.year + (1 if m2 < m1 else 0) if start and y1 else None)
    return start, _make(end_year, m2, d2, start or today)


def _day_after(day: int, after: date) -> date | None:
    """The next date with day-of-month ``day`` on or after ``after``."""
    d = after
    for _ in range(3):
        try:
            cand = date(d.year, d.month, day)
            if cand >= after:
                return cand
        except ValueError:
            pass
        d = (d.replace(day=1) + timedelta(days=32)).replace(day=1)
    return None


def _on_or_after(weekday: int | None, start: date) -> date | None:
    """The first date with ``weekday`` on or after ``start``."""
    if weekday is None:
        return None
    return start + timedelta(days=(weekday - start.weekday()) % 7)


def _weekday_date(today: date, weekday: int, *, next_week: bool) -> date:
    if next_week:
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _month_no(word: str) -> int:
    w = word.lower().rstrip(".")
    return _MONTHS["sept" if w.startswith("sept") else w[:3]]


def _duration(text: str, low: str) -> tuple[int | None, tuple[int, int] | None]:
    """Trip length in days and where it is written."""
    probes = (
        (rf"\b({EN_NUM})[ -]?(?:days?|day trip)\b", 1, low),
        (rf"(?<!\d)(\d{{1,3}}|{ZH_NUM})\s*(?:天|日游|日)(?!\s*(?:后|之后|以后))(?:\s*(?:\d{{1,3}}|{ZH_NUM})\s*[晚夜])?", 1,
         text),
        (rf"\b({EN_NUM})[ -]?weeks?\b", 7, low),
        (r"\b(?:a|one)[ -]week(?:long)?\b|\bweek-long\b", 7, low),
        (rf"(?<!\d)(\d{{1,2}}|{ZH_NUM})\s*(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天末])", 7, text),
        (rf"\b({EN_NUM})[ -]?nights?\b", 0, low),
        (rf"(?<!\d)(\d{{1,3}}|{ZH_NUM})\s*(?:晚|夜)(?![上间里])", 0, text),
        (r"\ba fortnight\b", 14, low),
    )
    for pattern, unit, hay in probes:
        for m in re.finditer(pattern, hay):
            if unit in (0, 1) and hay is text and re.search(r"[月号]\s*$", text[:m.start()]) and "天" not in m.group(0):
                continue  # "5月1日" is a date, not a duration ("下个月10天" is one)
            if unit == 1 and hay is text and re.match(r"\d{1,2}\s*日", m.group(0)) and re.search(
                    r"(?:到|至|-|~)\s*$", text[:m.start()]):
                continue  # "1月20日到22日": the end of a range
            if m.lastindex is None:
                return unit, m.span()
            n = parse_number(m.group(1))
            if not n or n > 400:
                continue
            return (n * unit if unit else n + 1), m.span()
    if weekend := re.search(r"\blong weekend\b", low):
        return 4, weekend.span()
    return None, None


@dataclass
class _Hit:
    pos: int
    end_pos: int
    start: date | None
    end: date | None = None
    weekday: int | None = None  # a weekday named without a week ("周日", "Sunday")


def _absolute(text: str, low: str, today: date) -> list[_Hit]:
    found: list[_Hit] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    def add(m: re.Match[str], start: date | None, end: date | None = None) -> None:
        found.append(_Hit(m.start(), m.end(), start, end))
        taken.append(m.span())

    # ISO / numeric with a year: 2027-04-02, 2027/4/2, 2027.04.02, with an optional range to a second one
    iso = r"(\d{4})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})"
    for m in re.finditer(rf"{iso}(?:{_SEP}(?:(\d{{4}})\s*[-/.]\s*)?(\d{{1,2}})\s*[-/.]\s*(\d{{1,2}}))?", text):
        start = _make(int(m.group(1)), int(m.group(2)), int(m.group(3)), today)
        end = None
        if m.group(6):
            year = int(m.group(4)) if m.group(4) else int(m.group(1))
            end = _make(year, int(m.group(5)), int(m.group(6)), today)
        add(m, start, end)
    # US numeric m/d/yyyy (also 3/5/27)
    for m in re.finditer(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b", text):
        if free(*m.span()):
            y = int(m.group(3))
            add(m, _make(y + 2000 if y < 100 else y, int(m.group(1)), int(m.group(2)), today))
    # numeric month/day without a year, as tickets, forms and both Chinese and US writers put it: 6/18, 4/3-4/9,
    # 6/18去6/22回 (a second one in the same message is the end); not a fraction (2/3 of the team, 1/2 天)
    md = r"(?<![\d/.])(\d{1,2})/(\d{1,2})(?![\d/%])(?!\.\d)(?!\s*(?:of\b|的|个|份|人|成|杯|页|天|小时|hours?\b|days?\b))"
    numeric = [m for m in re.finditer(md, text) if free(*m.span())
               and 1 <= int(m.group(1)) <= 12 and 1 <= int(m.group(2)) <= 31]
    if numeric:
        md_first, md_last = numeric[0], numeric[1] if len(numeric) > 1 else None
        start, end = _range(None, int(md_first.group(1)), int(md_first.group(2)), None,
                            int(md_last.group(1)) if md_last else int(md_first.group(1)),
                            int(md_last.group(2)) if md_last else None, today)
        if start is not None:
            add(md_first, start, end)
            if md_last is not None:
                taken.append(md_last.span())
    # Chinese: [2027年]10月1日[到[2027年][10月]7日], 5月1-5日, 五月一号, 8月15
    zh = (rf"(?:{_YEAR}\s*年\s*)?{_ZH_DAY}\s*月\s*{_ZH_DAY}\s*[日号]?"
          rf"(?:{_SEP}(?:{_YEAR}\s*年\s*)?(?:{_ZH_DAY}\s*月\s*)?{_ZH_DAY}\s*[日号])?")
    for m in re.finditer(zh, text):
        if not free(*m.span()):
            continue
        month, day = parse_number(m.group(2)), parse_number(m.group(3))
        if not month or not day or month > 12:
            continue
        end_month = (parse_number(m.group(5)) if m.group(5) else month) if m.group(6) else None
        end_day = parse_number(m.group(6)) if m.group(6) else None
        add(m, *_range(int(m.group(1)) if m.group(1) else None, month, day,
                       int(m.group(4)) if m.group(4) else None, end_month or month, end_day, today))
    # days of this or next month: 下个月10日到12日, 本月20号, next month on the 10th, the 10th to the 12th of next month
    month_of = {"下个月": 1, "下月": 1, "下一个月": 1, "这个月": 0, "本月": 0, "next": 1, "this": 0}

    def month_days(shift: int, d1: int, d2: int | None) -> tuple[date | None, date | None]:
        first = today.replace(day=1)
        for _ in range(shift):
            first = (first + timedelta(days=32)).replace(day=1)
        return _range(first.year, first.month, d1, first.year, first.month, d2, today)

    for m in re.finditer(rf"(下一个月|下个?月|这个月|本月)\s*{_ZH_DAY}\s*[日号]?(?:{_SEP}{_ZH_DAY}\s*[日号])?", text):
        d1, d2 = parse_number(m.group(2)), parse_number(m.group(3)) if m.group(3) else None
        if free(*m.span()) and d1 and 1 <= d1 <= 31 and (d2 is None or 1 <= d2 <= 31) and (
                m.group(3) or re.search(r"[日号]\s*$", m.group(0))):
            add(m, *month_days(month_of[m.group(1)], d1, d2))
    for m in re.finditer(rf"\b(?:(next|this) month,?\s+(?:on\s+)?(?:the\s+)?{_DAY}(?:{_SEP}(?:the\s+)?{_DAY})?"
                         rf"|(?:the\s+)?{_DAY}(?:{_SEP}(?:the\s+)?{_DAY})?\s+of\s+(next|this) month)\b", low):
        if not free(*m.span()):
            continue
        shift = month_of[m.group(1) or m.group(6)]
        first_day = int(m.group(2) or m.group(4))
        last = m.group(3) or m.group(5)
        last_day = int(last) if last else None
        if 1 <= first_day <= 31 and (last_day is None or 1 <= last_day <= 31):
            add(m, *month_days(shift, first_day, last_day))
    # English: May 1-5, May 1 to May 5, March 16th to March 18th, 2022, May 1, 2026
    en = (rf"\b({_MONTH_RE})\.?\s+{_DAY}(?:,?\s+{_YEAR})?\b"
          rf"(?:{_SEP}(?:({_MONTH_RE})\.?\s+)?{_DAY}(?:,?\s+{_YEAR})?\b)?")
    for m in re.finditer(en, low):
        if not free(*m.span()):
            continue
        month = _month_no(m.group(1))
        add(m, *_range(int(m.group(3)) if m.group(3) else None, month, int(m.group(2)),
                       int(m.group(6)) if m.group(6) else None, _month_no(m.group(4)) if m.group(4) else month,
                       int(m.group(5)) if m.group(5) else None, today))
    # English day-first: 1 May - 5 May, the 8th to the 10th of March, 2022, 8-10 March
    en_dm = (rf"\b(?:the\s+)?{_DAY}(?:\s+of)?(?:\s+({_MONTH_RE}))?(?:{_SEP}(?:the\s+)?{_DAY})?(?:\s+of)?\s+"
             rf"({_MONTH_RE})\b(?:,?\s+{_YEAR})?")
    for m in re.finditer(en_dm, low):
        if not free(*m.span()):
            continue
        dm_year = int(m.group(5)) if m.group(5) else None
        end_month = _month_no(m.group(4))
        start_month = _month_no(m.group(2)) if m.group(2) else end_month
        start = _make(dm_year, start_month, int(m.group(1)), today)
        end = _make(dm_year, end_month, int(m.group(3)), start or today) if m.group(3) else None
        add(m, start, end)
    return found


#: characters that make a word with a following 明 (说明, 证明, 表明…): 说明早已… is not 明早
_MING_WORDS = "说证表声发透文光简分聪鲜英开阐申标注查照高精神昌失黎澄清"


def _relative(text: str, low: str, today: date) -> list[tuple[_Hit, bool]]:
    """(hit, vague) for relative mentions."""
    out: list[tuple[_Hit, bool]] = []

    def add(m: re.Match[str], start: date, end: date | None = None, vague: bool = False, group: int = 0,
            weekday: int | None = None) -> None:
        out.append((_Hit(m.start(group), m.end(group), start, end, weekday), vague))

    for word, offset in (("day after tomorrow", 2), ("tomorrow", 1), ("tmrw", 1), ("tmr", 1), ("2morrow", 1),
                         ("today", 0), ("tonight", 0), ("day before yesterday", -2), ("yesterday", -1),
                         ("last night", -1)):
        for m in re.finditer(rf"\b{word}\b", low):
            if word in ("tomorrow", "yesterday") and re.search(r"(?:after|before) $", low[max(0, m.start() - 10):m.start()]):
                continue
            add(m, today + timedelta(days=offset))
    for word, offset in (("大后天", 3), ("后天", 2), ("明天", 1), ("明日", 1), ("明早", 1), ("明晨", 1), ("明晚", 1),
                         ("今天", 0), ("今日", 0), ("今早", 0), ("今晨", 0), ("今晚", 0), ("今夜", 0),
                         ("大前天", -3), ("前天", -2), ("昨天", -1), ("昨日", -1), ("昨晚", -1)):
        for m in re.finditer(word, text):
            before = text[max(0, m.start() - 1):m.start()]
            if word in ("后天", "前天") and before == "大":
                continue
            # 明 / 今 ending another word: 说明早已…, 说明晚上…, 如今早已…, 至今晚了…
            if word[0] == "明" and len(word) == 2 and word != "明天" and before and before in _MING_WORDS:
                continue
            if word[0] == "今" and len(word) == 2 and before and before in "如至而古迄现当":
                continue
            add(m, today + timedelta(days=offset))
    weekends = list(re.finditer(r"\b(this|next|coming)?\s*(long\s+)?weekend\b", low))
    if any(m.group(1) for m in weekends):  # "a cheap weekend in Dublin next weekend": the qualified one
        weekends = [m for m in weekends if m.group(1)]
    for m in weekends:
        nxt = m.group(1) == "next"
        sat = _weekday_date(today, 5, next_week=nxt)
        if not nxt and today.weekday() == 6:
            sat = today - timedelta(days=1)
        if m.group(2):
            fri = sat - timedelta(days=1)
            add(m, max(fri, today), sat + timedelta(days=2), vague=True)
        else:
            add(m, max(sat, today), sat + timedelta(days=1), vague=True)
    for m in re.finditer(r"(这|本|下|下个|下一)?(?:个)?(?:周|星期|礼拜)末", text):
        nxt = bool(m.group(1) and m.group(1).startswith("下"))
        sat = _weekday_date(today, 5, next_week=nxt)
        if not nxt and today.weekday() == 6:
            sat = today - timedelta(days=1)
        add(m, max(sat, today), sat + timedelta(days=1), vague=True)
    for m in re.finditer(r"\b(this|next|coming|on)?\s*(" + "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True))
                         + r")\b", low):
        if m.group(1) is None and len(m.group(2)) <= 3:
            continue  # a bare "sun"/"sat"/"wed" is too ambiguous
        add(m, _weekday_date(today, _WEEKDAYS_EN[m.group(2)], next_week=m.group(1) == "next"), group=2,
            weekday=None if m.group(1) in ("next",) else _WEEKDAYS_EN[m.group(2)])
    for m in re.finditer(r"(这|本|下|下个|下一)?(?:周|星期|礼拜)([一二三四五六日天])", text):
        nxt = bool(m.group(1) and m.group(1).startswith("下"))
        add(m, _weekday_date(today, _WEEKDAYS_ZH[m.group(2)], next_week=nxt),
            weekday=None if nxt else _WEEKDAYS_ZH[m.group(2)])
    for m in re.finditer(rf"\bin\s+({EN_NUM})\s+days?\b", low):
        if (n := parse_number(m.group(1))) is not None:
            add(m, today + timedelta(days=n))
    for m in re.finditer(rf"(?<!\d)(\d{{1,3}}|{ZH_NUM})\s*天(?:后|之后|以后)", text):
        if (n := parse_number(m.group(1))) is not None:
            add(m, today + timedelta(days=n))
    return out


def _months_between(first: date, last_month_start: date) -> date:
    nxt = (last_month_start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return nxt - timedelta(days=1)


def _period(text: str, low: str, today: date) -> tuple[tuple[date, date], str, tuple[int, int]] | None:
    """A month or season named without a day: ((first, last), words, span)."""
    def month_span(year: int, month: int) -> tuple[date, date]:
        first = date(year, month, 1)
        return first, _months_between(first, first)

    def next_month(month: int, year: int | None) -> tuple[date, date]:
        if year is not None:
            return month_span(year, month)
        y = today.year if (today.year, month) >= (today.year, today.month) else today.year + 1
        return month_span(y, month)

    year_of: int | None = None
    if re.search(r"明年|next year", low):
        year_of = today.year + 1
    elif m := re.search(r"(\d{4})\s*年|\bin\s+\w+\s+(\d{4})\b", low):
        year_of = int(m.group(1) or m.group(2))
    if m := re.search(r"(?<![周星期礼拜])(?:下个?(?:周|星期|礼拜)|下一周)(?![一二三四五六日天末])|\bnext week\b(?!end)", low):
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return (monday, monday + timedelta(days=6)), m.group(0), m.span()
    if m := re.search(r"(?:这|本)(?:周|星期|礼拜)(?![一二三四五六日天末])|\bthis week\b(?!end)", low):
        return (today, today + timedelta(days=6 - today.weekday())), m.group(0), m.span()
    if m := re.search(r"下个?月|\bnext month\b", low):
        first = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        return (first, _months_between(first, first)), m.group(0), m.span()
    if m := re.search(r"这个月|本月|\bthis month\b", low):
        first = today.replace(day=1)
        return (max(today, first), _months_between(first, first)), m.group(0), m.span()
    if m := re.search(rf"(?<![\d月])({ZH_NUM}|\d{{1,2}})\s*月(?:份|初|中旬?|下旬|底)?(?!\s*(?:\d|{ZH_NUM})\s*[日号]?)", text):
        month = parse_number(m.group(1))
        if month and 1 <= month <= 12 and not re.match(r"\s*(?:\d|[一二三四五六七八九十])", text[m.end():]):
            return next_month(month, year_of), m.group(0), m.span()
    if m := re.search(rf"\b(?:in|during|for|around|this|next|early|mid|late)[\s-]+({_MONTH_RE})\b(?!\s*\d)", low):
        month = _month_no(m.group(1))
        return next_month(month, year_of), _EN_MONTH_NAMES[month - 1], m.span()
    if m := re.search(r"(今年|明年|这个|今|这)?\s*(春天|春季|夏天|夏季|秋天|秋季|冬天|冬季|暑假|寒假)", text) or re.search(
            r"\b(?:this|next|in the|in|during the|over the)\s+(spring|summer|autumn|fall|winter)\b", low):
        word = m.group(m.lastindex or 0)
        a, b = _SEASONS[word]
        label = m.group(0).strip() if re.search(r"[\u4e00-\u9fff]", word) else word
        year = today.year + (1 if "明年" in m.group(0) or m.group(0).startswith("next") else 0)
        first = date(year, a, 1)
        last_first = date(year + (1 if b < a else 0), b, 1)
        last = _months_between(last_first, last_first)
        if last < today:
            first, last = date(year + 1, a, 1), _months_between(date(year + 1 + (1 if b < a else 0), b, 1),
                                                                date(year + 1 + (1 if b < a else 0), b, 1))
        return (max(first, today), last), label, m.span()
    return None


def period_options(period: tuple[date, date], days: int | None, lang: str, *, limit: int = 3) -> list[str]:
    """Quick replies inside a month/season: ranges starting on its first Fridays ("2027-04-02 to 2027-04-05")."""
    first, last = period
    n = max(1, min(days or 3, 30))
    out: list[str] = []
    if (last - first).days < 7:  # a week: start on its first day, two days later, four days later
        for k in range(0, min(5, (last - first).days + 1), 2):
            d = first + timedelta(days=k)
            end = d + timedelta(days=n - 1)
            out.append(f"{d.isoformat()} 到 {end.isoformat()}" if lang == "zh" else f"{d.isoformat()} to {end.isoformat()}")
        return out[:limit]
    d = first + timedelta(days=(4 - first.weekday()) % 7)
    step = max(7, ((last - first).days // limit) // 7 * 7) if (last - first).days > 40 else 7
    while d + timedelta(days=n - 1) <= last + timedelta(days=n) and len(out) < limit:
        end = d + timedelta(days=n - 1)
        out.append(f"{d.isoformat()} 到 {end.isoformat()}" if lang == "zh" else f"{d.isoformat()} to {end.isoformat()}")
        d += timedelta(days=step)
    return out


def _day_only(text: str, low: str) -> list[tuple[int, int, int]]:
    """(position, end position, day) for a day of the month with no month ("5号", "the 5th")."""
    out = []
    for m in re.finditer(rf"(?<![月\d]){_ZH_DAY}\s*[号日](?![游])", text):
        if re.search(r"月\s*$", text[:m.start()]):
            continue
        n = parse_number(m.group(1))
        if n and 1 <= n <= 31:
            out.append((m.start(), m.end(), n))
    for m in re.finditer(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+of\s)", low):
        n = int(m.group(1))
        if 1 <= n <= 31:
            out.append((m.start(), m.end(), n))
    return out


_ORD_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
_ORDINALS = {w: i + 1 for i, w in enumerate(_ORD_UNITS + ["tenth", "eleventh", "twelfth", "thirteenth",
                                                          "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                                                          "eighteenth", "nineteenth"])}
_ORDINALS.update({"twentieth": 20, "thirtieth": 30})
_ORDINALS.update({f"twenty {w}": 21 + i for i, w in enumerate(_ORD_UNITS)})
_ORDINALS.update({f"twenty-{w}": 21 + i for i, w in enumerate(_ORD_UNITS)})
_ORDINALS.update({"thirty first": 31, "thirty-first": 31})


_ORDINAL_AFTER = re.compile(rf"\b(the|{_MONTH_RE})\s+({'|'.join(sorted(map(re.escape, _ORDINALS), key=len, reverse=True))})\b")


def _ordinal_digits(low: str) -> str:
    """"june sixteenth" → "june 16th" (only after a month name or "the", so "first class" stays)."""
    return _ORDINAL_AFTER.sub(lambda m: f"{m.group(1)} {_ORDINALS[m.group(2)]}th", low)


def parse_dates(text: str, today: date, *, anchor: date | None = None) -> DateResult:
    """Start/end dates, a duration, or a period from ``text`` (see the module docstring).

    ``anchor`` is the trip's start date known from earlier in the conversation: a day-of-month
    alone ("5号回来") is read as the return date on or after it.
    """
    text = normalize_text(text)
    low = _ordinal_digits(text.lower())
    if len(low) != len(text):
        text = low  # keep positions aligned between the two views
    duration, dur_span = _duration(text, low)
    result = DateResult(duration_days=duration)
    if dur_span:
        result.spans.append(dur_span)
    absolute = sorted(_absolute(text, low, today), key=lambda h: h.pos)
    year_now = None
    if m := re.search(r"明年|next year", low):
        year_now = today.year + 1
    holiday = find_holiday(low)
    if holiday is not None and re.match(r"\s*(?:markets?|trees?|lights|shopping|parties|party|decorations|sales?|"
                                         r"市场|集市|装饰)", low[holiday.end:]):
        holiday = None  # "Christmas markets": a thing to see, not the date
    if absolute:
        if any(h.start is None for h in absolute):
            result.notes.append("request.note.bad_date")
        hits = [h for h in absolute if h.start is not None]
        if hits:
            first = hits[0]
            result.start = first.start
            result.end = first.end or (hits[1].start if len(hits) > 1 else None)
            if first.end is None and len(hits) > 1 and hits[1].end is not None and result.start == hits[1].start:
                result.end = hits[1].end
            result.spans += [(h.pos, h.end_pos) for h in hits]
            if first.end is None and len(hits) == 1 and _RETURN_CUE.search(text[max(0, first.pos - 14):first.pos]):
                result.end, result.start, result.end_only = first.start, None, True
    elif holiday is not None:
        year = year_now
        if m := re.search(r"(\d{4})\s*年", text[:holiday.start]):
            year = int(m.group(1))
        span = holiday_span(holiday.holiday_id, today=today, year=year)
        if span:
            result.start, result.end = span[0], (None if duration else span[1])
            result.spans.append((holiday.start, holiday.end))
    else:
        relative = sorted(_relative(text, low, today), key=lambda x: x[0].pos)
        if relative:
            hit, vague = relative[0]
            result.start, result.end, result.vague, result.relative = hit.start, hit.end, vague, True
            result.spans.append((hit.pos, hit.end_pos))
            if result.end is None and len(relative) > 1 and relative[1][0].start and hit.start is not None:
                second = relative[1][0]
                end = _on_or_after(second.weekday, hit.start) if second.weekday is not None else second.start
                if end is not None and end >= hit.start:
                    result.end = end
                    result.spans.append((second.pos, second.end_pos))
            if re.search(r"\blong weekend\b", low) and duration == 4 and vague:
                duration = result.duration_days = None if result.end else duration
        else:
            period = _period(text, low, today)
            if period:
                result.period, result.period_text = period[0], period[1]
                result.spans.append(period[2])
    # a day of the month alone: the end of a known start ("3号出发5号回来", "不对，5号回来")
    days_only = [d for d in _day_only(text, low) if all(d[1] <= a or d[0] >= b for a, b in result.spans)]
    if days_only:
        base = result.start or anchor
        if result.start is None and anchor is None and len(days_only) >= 2:
            result.start = _day_after(days_only[0][2], today)
            result.end = _day_after(days_only[1][2], result.start) if result.start else None
        elif base is not None and result.end is None:
            pick = days_only[-1] if result.start else days_only[0]
            is_return = result.start is not None or bool(_RETURN_CUE.search(text[pick[1]:pick[1] + 4])) or bool(
                _RETURN_CUE.search(text[max(0, pick[0] - 14):pick[0]]))
            if is_return:
                result.end = _day_after(pick[2], base)
                result.end_only = result.start is None
            elif result.start is None:
                result.start = _day_after(pick[2], today)
        elif result.start is None and base is None:
            result.start = _day_after(days_only[0][2], today)
    # a return weekday after a start ("Thanksgiving, back Sunday", "周二出发，周四回来")
    if result.start and result.end is None and not duration:
        for hit, _ in sorted(_relative(text, low, today), key=lambda x: x[0].pos):
            if hit.weekday is not None and any(hit.pos >= b for _, b in result.spans[:1]) and (
                    _RETURN_CUE.search(text[max(0, hit.pos - 8):hit.pos]) or _RETURN_CUE.search(
                        text[hit.end_pos:hit.end_pos + 4])):
                result.end = _on_or_after(hit.weekday, result.start + timedelta(days=1))
                break
    if result.start and result.end is None and re.search(r"当天(?:来回|往返|回来|返回)|(?<![\d二两三四五六七八九十])一日游|\b(?:a|one)[ -]day trip\b|\bsame[ -]day\b",
                                                         low):
        result.end, duration = result.start, 1
        result.duration_days = 1
    if result.start and result.end is None and duration:
        result.end = result.start + timedelta(days=duration - 1)
    if result.start and result.end and result.end < result.start:
        result.notes.append("request.note.end_before_start")
        result.end = None
    return result
