"""Holiday names → their real dates for a year (``data/holidays.yaml``).

Lunar festivals and China's official days off come from the maintained ``holidays`` package
(its China calendar knows the substituted days off of announced years and computes the lunar
dates for any year); Easter from ``dateutil``; fixed days from the data file. A Chinese public
holiday's span is the run of days off (holiday or weekend) around it, as people travel it.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml


__all__ = ["HolidayMention", "find_holiday", "holiday_span"]

_DATA = Path(__file__).parent / "data" / "holidays.yaml"


@lru_cache(maxsize=1)
def _table() -> dict[str, dict]:
    return read_yaml(_DATA)


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    words: list[tuple[str, str]] = []
    for hid, spec in _table().items():
        for lang in ("zh", "en"):
            words += [(w, hid) for w in spec["words"].get(lang, [])]
    words.sort(key=lambda w: -len(w[0]))
    alts = ["(?P<h%d>%s)" % (i, re.escape(w) if re.search("[\u4e00-\u9fff]", w) else rf"\b{re.escape(w)}\b")
            for i, (w, _) in enumerate(words)]
    _pattern_ids.clear()
    _pattern_ids.extend(hid for _, hid in words)
    return re.compile("|".join(alts), re.IGNORECASE)


_pattern_ids: list[str] = []


class HolidayMention:
    __slots__ = ("holiday_id", "start", "end")

    def __init__(self, holiday_id: str, start: int, end: int) -> None:
        self.holiday_id, self.start, self.end = holiday_id, start, end


def find_holiday(text: str) -> HolidayMention | None:
    """The first holiday named in ``text`` (position and id), or None."""
    m = _pattern().search(text)
    if not m or m.lastgroup is None:
        return None
    return HolidayMention(_pattern_ids[int(m.lastgroup[1:])], m.start(), m.end())


@lru_cache(maxsize=64)
def _china(year: int) -> dict[date, str]:
    import holidays

    return dict(holidays.China(years=year, language="en_US"))  # names in English whatever the locale


def _cn_span(name: str, year: int) -> tuple[date, date] | None:
    days = _china(year)
    first = next((d for d, n in sorted(days.items()) if n.startswith(name)), None)
    if first is None:
        return None

    def off(d: date) -> bool:
        return d in days or d.weekday() >= 5 and d.year == year or d in _china(d.year)

    start = end = first
    while off(start - timedelta(days=1)) and (first - start).days < 3:
        start -= timedelta(days=1)
    while off(end + timedelta(days=1)) and (end - first).days < 9:
        end += timedelta(days=1)
    # a weekend before a festival belongs to the span only when the holiday starts on a Monday
    if name in ("Chinese New Year's Eve",):
        start = first
    return start, end


def _day_of(spec: dict, year: int) -> tuple[date, date | None] | None:
    if "cn" in spec:
        cn_span = _cn_span(spec["cn"], year)
        if cn_span is None:
            return None
        return cn_span[0], (cn_span[1] if cn_span[1] > cn_span[0] else None)  # one day off: the trip length stays open
    if spec.get("easter"):
        from dateutil.easter import easter

        day = easter(year)
    elif spec.get("thanksgiving"):
        nov1 = date(year, 11, 1)
        day = nov1 + timedelta(days=(3 - nov1.weekday()) % 7 + 21)
    elif spec.get("golden_week"):
        return date(year, 4, 29), date(year, 5, 5)
    else:
        month, dom = (int(x) for x in str(spec["fixed"]).split("-"))
        day = date(year, month, dom)
    span = int(spec.get("span", 1))
    return day, (day + timedelta(days=span - 1)) if span > 1 else None


def holiday_span(holiday_id: str, *, today: date, year: int | None = None) -> tuple[date, date | None] | None:
    """(first day, last day or None) of the holiday's next occurrence on or after ``today``
    (or in ``year``); None for an unknown id."""
    spec = _table().get(holiday_id)
    if spec is None:
        return None
    if year is not None:
        return _day_of(spec, year)
    for y in (today.year, today.year + 1):
        got = _day_of(spec, y)
        if got and (got[1] or got[0]) >= today:
            return got
    return None
