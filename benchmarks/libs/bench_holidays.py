"""Holiday dates offline: holidays vs chinese-calendar vs jionlp vs dateutil (ours has none).

Run: ``PYTHONPATH=/tmp/libeval .venv/bin/python benchmarks/libs/bench_holidays.py``

1. Festival days 2026–2028 against known values (lunar festivals, Qingming, Easter, Thanksgiving,
   Christmas, Japan's Golden Week days).
2. China's official holiday spans (放假调休, incl. weekends, minus make-up working days): 2026 as
   announced by the State Council; 2027/2028 where a library claims to know them.

``holidays`` is asked with ``language="en_US"``: its holiday names otherwise follow the
LANGUAGE / LC_ALL / LC_MESSAGES / LANG environment (gettext), e.g. "劳动节" under zh_CN.
"""

from __future__ import annotations

import re
import sys
import time
from datetime import date, datetime, timedelta

from _harness import NET_ATTEMPTS, block_network, call, optional, table

block_network()

holidays = optional("holidays")
cc = optional("chinese_calendar")
jio = optional("jionlp")
from dateutil.easter import easter  # noqa: E402  (python-dateutil is already a project dependency)

YEARS = (2026, 2027, 2028)
KNOWN: dict[str, dict[int, date]] = {
    "除夕 CNY Eve": {2026: date(2026, 2, 16), 2027: date(2027, 2, 5), 2028: date(2028, 1, 25)},
    "春节 CNY": {2026: date(2026, 2, 17), 2027: date(2027, 2, 6), 2028: date(2028, 1, 26)},
    "清明 Qingming": {2026: date(2026, 4, 5), 2027: date(2027, 4, 5), 2028: date(2028, 4, 4)},
    "劳动节 Labour Day": {y: date(y, 5, 1) for y in YEARS},
    "端午 Dragon Boat": {2026: date(2026, 6, 19), 2027: date(2027, 6, 9), 2028: date(2028, 5, 28)},
    "中秋 Mid-Autumn": {2026: date(2026, 9, 25), 2027: date(2027, 9, 15), 2028: date(2028, 10, 3)},
    "国庆 National Day": {y: date(y, 10, 1) for y in YEARS},
    "Easter Sunday": {2026: date(2026, 4, 5), 2027: date(2027, 3, 28), 2028: date(2028, 4, 16)},
    "US Thanksgiving": {2026: date(2026, 11, 26), 2027: date(2027, 11, 25), 2028: date(2028, 11, 23)},
    "Christmas": {y: date(y, 12, 25) for y in YEARS},
    "JP Showa Day": {y: date(y, 4, 29) for y in YEARS},
    "JP Children's Day": {y: date(y, 5, 5) for y in YEARS},
}
CN_NAMES = {"除夕 CNY Eve": "Chinese New Year's Eve", "春节 CNY": "Chinese New Year (Spring Festival)",
            "清明 Qingming": "Tomb-Sweeping Day", "劳动节 Labour Day": "Labor Day",
            "端午 Dragon Boat": "Dragon Boat Festival", "中秋 Mid-Autumn": "Mid-Autumn Festival",
            "国庆 National Day": "National Day"}
JIO_WORDS = {"除夕 CNY Eve": "除夕", "春节 CNY": "春节", "清明 Qingming": "清明节", "劳动节 Labour Day": "劳动节",
             "端午 Dragon Boat": "端午节", "中秋 Mid-Autumn": "中秋节", "国庆 National Day": "国庆节",
             "Easter Sunday": "复活节", "US Thanksgiving": "感恩节", "Christmas": "圣诞节"}
# 2026 official spans (State Council notice, Nov 2025)
OFFICIAL_2026 = {"春节 CNY": (date(2026, 2, 15), date(2026, 2, 23)), "清明 Qingming": (date(2026, 4, 4), date(2026, 4, 6)),
                 "劳动节 Labour Day": (date(2026, 5, 1), date(2026, 5, 5)),
                 "端午 Dragon Boat": (date(2026, 6, 19), date(2026, 6, 21)),
                 "中秋 Mid-Autumn": (date(2026, 9, 25), date(2026, 9, 27)),
                 "国庆 National Day": (date(2026, 10, 1), date(2026, 10, 7))}


def hol_day(name: str, year: int) -> date | str | None:
    if name in CN_NAMES:
        cn = holidays.country_holidays("CN", years=year, language="en_US")
        return next((d for d, n in sorted(cn.items()) if CN_NAMES[name] in n.split("; ")), None)
    if name == "Easter Sunday":
        us = holidays.US(years=year)
        if any("Easter" in n for n in us.values()):
            return next(d for d, n in us.items() if "Easter" in n)
        nyse = holidays.financial_holidays("NYSE", years=year)
        good_friday = next((d for d, n in nyse.items() if n == "Good Friday"), None)
        return f"not in US; NYSE Good Friday+2 = {good_friday + timedelta(days=2)}" if good_friday else None
    if name == "US Thanksgiving":
        return next((d for d, n in holidays.US(years=year, language="en_US").items() if n == "Thanksgiving Day"), None)
    if name == "Christmas":
        return next((d for d, n in holidays.US(years=year, language="en_US").items() if n == "Christmas Day"), None)
    if name.startswith("JP"):
        want = {"JP Showa Day": "Showa Day", "JP Children's Day": "Children's Day"}[name]
        return next((d for d, n in holidays.JP(years=year, language="en_US").items() if n == want), None)
    return None


def easter_other(year: int) -> date | None:
    """Easter Sunday from holidays' Sweden calendar (one that lists the Sunday itself)."""
    se = holidays.country_holidays("SE", years=year, language="en_US")
    return next((d for d, n in se.items() if n == "Easter Sunday"), None)


def jio_day(name: str, year: int) -> date | str | None:
    word = JIO_WORDS.get(name)
    if not word:
        return None
    tb = time.mktime(datetime(year, 1, 1, 9).timetuple())
    r = call(jio.parse_time, word, time_base=tb)
    return date.fromisoformat(r["time"][0][:10]) if isinstance(r, dict) else r


def cell(got: object, want: date) -> str:
    if got is None:
        return "–"
    if isinstance(got, date):
        return "✓" if got == want else f"✗ {got}"
    return str(got)


def _makeup_workdays(cn: dict) -> set[date]:
    out = set()
    for n in cn.values():
        for m in re.finditer(r"substituted from (\d\d)/(\d\d)/(\d{4})", n):
            out.add(date(int(m.group(3)), int(m.group(1)), int(m.group(2))))
    return out


def hol_span(name: str, year: int) -> tuple[date, date] | None:
    cn = holidays.country_holidays("CN", years=[year - 1, year, year + 1], language="en_US")
    workdays = _makeup_workdays(cn)
    day = hol_day(name, year)
    if not isinstance(day, date):
        return None

    def off(d: date) -> bool:
        return d in cn or (d.weekday() >= 5 and d not in workdays)

    return _expand(day, off)


def cc_span(name: str, year: int) -> tuple[date, date] | str | None:
    day = KNOWN[name][year]
    try:
        cc.is_holiday(day)
    except NotImplementedError:
        return "NotImplementedError"
    return _expand(day, cc.is_holiday) if cc.is_holiday(day) else None


def _expand(day: date, off) -> tuple[date, date]:
    start = end = day
    while off(start - timedelta(days=1)):
        start -= timedelta(days=1)
    while off(end + timedelta(days=1)):
        end += timedelta(days=1)
    return start, end


def span_cell(got: object, want: tuple[date, date] | None) -> str:
    if got is None:
        return "–"
    if isinstance(got, tuple):
        txt = f"{got[0]:%m-%d}..{got[1]:%m-%d}"
        return txt if want is None else ("✓ " + txt if got == want else "✗ " + txt)
    return str(got)


def main() -> int:
    sources = []
    if holidays:
        sources.append(("holidays", hol_day))
    if jio:
        sources.append(("jionlp.parse_time", jio_day))
    print("## Festival days (✓ = the known date; – = not provided)\n")
    rows = []
    for name, by_year in KNOWN.items():
        for year in YEARS:
            want = by_year[year]
            row = [name, year, want.isoformat()]
            for _, fn in sources:
                row.append(cell(call(fn, name, year), want))
            row.append(cell(easter(year), want) if name == "Easter Sunday" else "–")
            if holidays:
                row.append(cell(easter_other(year), want) if name == "Easter Sunday" else "–")
            rows.append(row)
    heads = ["holiday", "year", "known"] + [s for s, _ in sources] + ["dateutil.easter"]
    if holidays:
        heads.append("holidays SE")
    print(table(heads, rows))
    if not holidays or not cc:
        print("\n(holidays or chinese_calendar not installed: spans skipped in part)")
    print("\n## China official holiday spans (days off in a row around the festival)\n")
    srows = []
    for name in OFFICIAL_2026:
        for year in YEARS:
            want = OFFICIAL_2026[name] if year == 2026 else None
            srows.append([name, year, span_cell(want, None) if want else "no library ships it",
                          span_cell(call(hol_span, name, year), want) if holidays else "n/a",
                          span_cell(call(cc_span, name, year), want) if cc else "n/a"])
    print(table(["holiday", "year", "official", "holidays", "chinese_calendar"], srows))
    if cc:
        years = [y for y in range(2000, 2031) if not isinstance(call(cc.is_holiday, date(y, 1, 1)), str)]
        print(f"\nchinese_calendar knows years {years[0]}–{years[-1]}")
    print(f"\nnetwork attempts: {len(NET_ATTEMPTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
