"""Dates in travel requests: our rules vs dateparser vs jionlp, with a fixed ``today``.

Run: ``PYTHONPATH=/tmp/libeval .venv/bin/python benchmarks/libs/bench_dates.py [--fails]``

Systems (each reduced to a start and an end date):

* ours — ``parsing.parse_dates(text, today)`` (ranges, relative days, weekends, durations), and,
  when present, the newer ``navigo_core.understand.parse_dates`` (a month alone → its ``period``);
* dateparser — ``dateparser.search.search_dates(text, languages=["en", "zh"], settings=
  {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": today})``: first found date = start, second = end;
  and ``dateparser.parse(text)`` on the whole text (start only);
  the same with ``languages=None`` (auto-detect: explicit ``"zh"`` reads "5月1日" as "in 5 months
  and 1 day");
* jionlp (Chinese cases only) — ``jio.ner.extract_time(text, time_base)``: the first time point/span
  gives the start (and the end when it spans several days), a second point the end, a
  ``time_delta`` ("三天") the end when none was found; with ``ret_future`` False and True; and
  ``jio.parse_time(text, time_base)`` on the whole text.

Expected values follow the product conventions in ``navigo_core/planner/parsing.py``: a date
without a year is its next occurrence, "下周五"/"next Friday" is the Friday of next week,
"this weekend" is Sat–Sun, a duration gives end = start + n − 1, a month ("下个月") is its
first to last day. ``ANY`` = the end is not scored (holidays: the trip length is open); a tuple
of starts = any of them is right (春节: the Eve or New Year's Day).
Cases tagged ``convention`` have a reading that depends on that convention.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date, datetime, timedelta

from _harness import NET_ATTEMPTS, block_network, call, failures_section, old_rules, optional, pct, table, timed_calls

block_network()

parsing = old_rules()  # the rules before navigo_core.understand (git history)

dateparser = optional("dateparser")
if dateparser:
    from dateparser.search import search_dates
jio = optional("jionlp")

TODAY = date(2027, 3, 10)  # a Wednesday
ANY = "any"
D = date


def d(m: int, day: int, y: int = 2027) -> date:
    return date(y, m, day)


# (text, start, end, tags)
ZH: list[tuple[str, date | None, object, str]] = [
    ("2027年10月1日到10月7日去北京", d(10, 1), d(10, 7), "year-range"),
    ("2027年1月20日到22日去哈尔滨", d(1, 20), d(1, 22), "year-range"),
    ("5月1日到5日去杭州", d(5, 1), d(5, 5), "range"),
    ("5月1日至5月5日", d(5, 1), d(5, 5), "range"),
    ("五月一号到五号", d(5, 1), d(5, 5), "range zh-numeral"),
    ("十月一日到十月七日自驾", d(10, 1), d(10, 7), "range zh-numeral"),
    ("6月10日到6月14日", d(6, 10), d(6, 14), "range"),
    ("12月30日到1月2日去哈尔滨", d(12, 30), d(1, 2, 2028), "range cross-year"),
    ("2月1日到3日", d(2, 1, 2028), d(2, 3, 2028), "range next-year"),
    ("4月3号到4月6号", d(4, 3), d(4, 6), "range"),
    ("3月20日-25日", d(3, 20), d(3, 25), "range"),
    ("从3月12日到3月15日", d(3, 12), d(3, 15), "range"),
    ("2027-04-02到2027-04-05", d(4, 2), d(4, 5), "iso"),
    ("2027/5/1 - 2027/5/3", d(5, 1), d(5, 3), "iso"),
    ("2028年1月1日出发", d(1, 1, 2028), None, "absolute"),
    ("八月十五号出发", d(8, 15), None, "absolute zh-numeral"),
    ("10月1日出发，玩7天", d(10, 1), d(10, 7), "duration"),
    ("5月2日出发，3天2晚", d(5, 2), d(5, 4), "duration"),
    ("7月15日起玩两周", d(7, 15), d(7, 28), "duration"),
    ("明天去杭州", d(3, 11), None, "relative"),
    ("后天出发", d(3, 12), None, "relative"),
    ("大后天走", d(3, 13), None, "relative"),
    ("今天下午出发", d(3, 10), None, "relative"),
    ("3天后出发", d(3, 13), None, "relative"),
    ("明天出发玩三天", d(3, 11), d(3, 13), "relative duration"),
    ("下周五去上海", d(3, 19), None, "weekday convention"),
    ("周五出发", d(3, 12), None, "weekday"),
    ("这周六去苏州", d(3, 13), None, "weekday"),
    ("下周三到下周五", d(3, 17), d(3, 19), "weekday range convention"),
    ("这周末去苏州", d(3, 13), d(3, 14), "weekend"),
    ("下周末去莫干山", d(3, 20), d(3, 21), "weekend convention"),
    ("下个月去成都", d(4, 1), d(4, 30), "month"),
    ("明年1月3日", d(1, 3, 2028), None, "relative-year"),
    ("国庆节去北京", d(10, 1), ANY, "holiday"),
    ("五一去青岛", d(5, 1), ANY, "holiday"),
    ("春节回家", (d(1, 25, 2028), d(1, 26, 2028)), ANY, "holiday lunar"),  # Eve (a day off since 2025) or 初一
    ("中秋节去西湖", d(9, 15), ANY, "holiday lunar"),
    ("端午节去划龙舟", d(6, 9), ANY, "holiday lunar"),
    ("上海出发去杭州，5月1日到5日，两个大人，预算6000元", d(5, 1), d(5, 5), "range sentence"),
    ("帮我规划一下明天从北京去天津的一日游", d(3, 11), d(3, 11), "relative duration sentence"),
]
EN: list[tuple[str, date | None, object, str]] = [
    ("June 10 to June 14", d(6, 10), d(6, 14), "range"),
    ("March 16th to March 18th, 2022", d(3, 16, 2022), d(3, 18, 2022), "year-range"),
    ("2027-04-02 to 2027-04-05", d(4, 2), d(4, 5), "iso"),
    ("May 1 to May 5", d(5, 1), d(5, 5), "range"),
    ("May 1-5", d(5, 1), d(5, 5), "range"),
    ("from July 3rd to July 7th", d(7, 3), d(7, 7), "range"),
    ("1 May - 5 May", d(5, 1), d(5, 5), "range"),
    ("Dec 28 to Jan 3", d(12, 28), d(1, 3, 2028), "range cross-year"),
    ("June 10th through June 14th", d(6, 10), d(6, 14), "range"),
    ("Sept 5 - Sept 9", d(9, 5), d(9, 9), "range"),
    ("we land on 14 August and leave on 20 August", d(8, 14), d(8, 20), "range"),
    ("Plan a 5-day trip from Boston to Denver from April 11th to April 15th, 2027, budget $2,000",
     d(4, 11), d(4, 15), "year-range sentence"),
    ("October 2nd, 2027", d(10, 2), None, "absolute"),
    ("Feb 3rd", d(2, 3, 2028), None, "absolute next-year"),
    ("5/1 to 5/5", d(5, 1), d(5, 5), "numeric-us"),
    ("leaving on April 20 for a week", d(4, 20), d(4, 26), "duration"),
    ("on 2027-05-01 for 2 nights", d(5, 1), d(5, 3), "duration"),
    ("tomorrow", d(3, 11), None, "relative"),
    ("the day after tomorrow", d(3, 12), None, "relative"),
    ("in 3 days", d(3, 13), None, "relative"),
    ("tomorrow for 3 days", d(3, 11), d(3, 13), "relative duration"),
    ("next friday", d(3, 19), None, "weekday convention"),
    ("this friday", d(3, 12), None, "weekday"),
    ("I want to go to Tokyo on Saturday", d(3, 13), None, "weekday"),
    ("next Monday to next Wednesday", d(3, 15), d(3, 17), "weekday range"),
    ("this weekend", d(3, 13), d(3, 14), "weekend"),
    ("next weekend", d(3, 20), d(3, 21), "weekend convention"),
    ("this saturday and sunday", d(3, 13), d(3, 14), "weekend"),
    ("next month", d(4, 1), d(4, 30), "month"),
    ("Christmas in Paris", d(12, 25), ANY, "holiday"),
    ("Thanksgiving in New York", d(11, 25), ANY, "holiday"),
]
NONE: list[tuple[str, date | None, object, str]] = [
    ("去杭州玩，预算6000元", None, None, "no-date"),
    ("从上海出发去杭州，两个大人一个小孩", None, None, "no-date"),
    ("帮我查一下温州到汉中的汽车", None, None, "no-date"),
    ("two adults, budget $3,000, love hiking", None, None, "no-date"),
    ("May I bring 2 kids to Paris?", None, None, "no-date"),
    ("I like the sun and the sea", None, None, "no-date"),
]
CASES = [("zh", *c) for c in ZH + NONE[:3]] + [("en", *c) for c in EN + NONE[3:]]


# --- adapters: text → (start, end) ----------------------------------------------

def ours(text: str) -> tuple[date | None, date | None]:
    r = parsing.parse_dates(text, TODAY)
    return r.start, r.end


UND = optional("navigo_core.understand")  # the newer rule package (commit d865cc2), when present


def ours_new(text: str) -> tuple[date | None, date | None]:
    """``understand.parse_dates``; a month named alone is its ``period`` (first..last day)."""
    r = UND.parse_dates(text, TODAY)
    if r.start is None and r.period:
        return r.period
    return r.start, r.end


DP_SETTINGS = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": datetime.combine(TODAY, datetime.min.time())}


def dp_search(text: str) -> tuple[date | None, date | None]:
    found = search_dates(text, languages=["en", "zh"], settings=DP_SETTINGS) or []
    days = [dt.date() for _, dt in found]
    return (days[0] if days else None), (days[1] if len(days) > 1 else None)


def dp_search_auto(text: str) -> tuple[date | None, date | None]:
    """The same without ``languages`` (dateparser detects the language per text)."""
    found = search_dates(text, settings=DP_SETTINGS) or []
    days = [dt.date() for _, dt in found]
    return (days[0] if days else None), (days[1] if len(days) > 1 else None)


def dp_parse(text: str) -> tuple[date | None, date | None]:
    dt = dateparser.parse(text, languages=["en", "zh"], settings=DP_SETTINGS)
    return (dt.date() if dt else None), None


TIME_BASE = time.mktime(datetime.combine(TODAY, datetime.min.time()).replace(hour=9).timetuple())


def _span(detail_time: list[str]) -> tuple[date, date | None]:
    a, b = date.fromisoformat(detail_time[0][:10]), date.fromisoformat(detail_time[1][:10])
    return a, (b if b != a else None)


def _delta_days(t: dict) -> int | None:
    days = t.get("day", 0) + 7 * t.get("week", 0) if isinstance(t, dict) else 0
    return int(days) if days else None


def jio_extract(ret_future: bool):
    def run(text: str) -> tuple[date | None, date | None]:
        ents = call(jio.ner.extract_time, text, time_base=TIME_BASE, ret_future=ret_future)
        if not isinstance(ents, list):
            return None, None
        start = end = None
        delta = None
        for e in ents:
            det = e.get("detail") or {}
            if e["type"] in ("time_point", "time_span") and isinstance(det.get("time"), list):
                a, b = _span(det["time"])
                if start is None:
                    start, end = a, b
                elif end is None and a >= start:
                    end = a
            elif e["type"] == "time_delta" and delta is None:
                delta = _delta_days(det.get("time"))
        if start and end is None and delta:
            end = start + timedelta(days=delta - 1)
        return start, end
    return run


def jio_parse(text: str) -> tuple[date | None, date | None]:
    r = call(jio.parse_time, text, time_base=TIME_BASE)
    if isinstance(r, dict) and r.get("type") in ("time_point", "time_span") and isinstance(r.get("time"), list):
        return _span(r["time"])
    return None, None


def score(fn, cases) -> tuple[int, int, int, list[str]]:
    s_ok = e_ok = both = 0
    fails = []
    for _lang, text, start, end, tags in cases:
        got = call(fn, text)
        got_s, got_e = got if isinstance(got, tuple) else (None, None)
        a = got_s in start if isinstance(start, tuple) else got_s == start
        b = end == ANY or got_e == end
        s_ok += a
        e_ok += b
        both += a and b
        if not (a and b):
            fails.append(f"[{tags}] {text} → {got_s} .. {got_e} (want {start} .. {end})")
    return s_ok, e_ok, both, fails


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fails", action="store_true", help="list every miss")
    args = ap.parse_args()
    systems: list[tuple[str, object, set[str]]] = [("old rules (8ecfb3b): parsing.parse_dates", ours, {"zh", "en"})]
    if UND:
        systems.append(("ours (new): understand.parse_dates", ours_new, {"zh", "en"}))
    if dateparser:
        systems += [("dateparser.search.search_dates", dp_search, {"zh", "en"}),
                    ("dateparser.search.search_dates(languages=None)", dp_search_auto, {"zh", "en"}),
                    ("dateparser.parse (whole text)", dp_parse, {"zh", "en"})]
    if jio:
        systems += [("jionlp.ner.extract_time", jio_extract(False), {"zh"}),
                    ("jionlp.ner.extract_time(ret_future=True)", jio_extract(True), {"zh"}),
                    ("jionlp.parse_time (whole text)", jio_parse, {"zh"})]
    print(f"today = {TODAY} ({TODAY:%A}); {len(CASES)} cases: {sum(c[0] == 'zh' for c in CASES)} zh, "
          f"{sum(c[0] == 'en' for c in CASES)} en (incl. {len(NONE)} without a date)\n")
    rows, all_fails = [], {}
    for lang in ("zh", "en"):
        cases = [c for c in CASES if c[0] == lang]
        no_conv = [c for c in cases if "convention" not in c[4]]
        for name, fn, langs in systems:
            if lang not in langs:
                continue
            s_ok, e_ok, both, fails = score(fn, cases)
            both_nc = score(fn, no_conv)[2]
            all_fails[f"{name} [{lang}]"] = fails
            timing = timed_calls(fn, [c[1] for c in cases], repeat=3)
            rows.append([lang, name, pct(s_ok, len(cases)), pct(e_ok, len(cases)), pct(both, len(cases)),
                         pct(both_nc, len(no_conv)), timing["p50"], timing["p95"]])
    print(table(["lang", "system", "start", "end", "start+end", "start+end w/o convention cases",
                 "µs/call p50", "µs/call p95"], rows))
    # per tag (start+end), for the main systems
    tags = sorted({t for c in CASES for t in c[4].split()})
    keep = ("old rules (8ecfb3b): parsing.parse_dates", "ours (new): understand.parse_dates", "dateparser.search.search_dates",
            "jionlp.ner.extract_time")
    main_systems = [s for s in systems if s[0] in keep]
    trows = []
    for tag in tags:
        cases = [c for c in CASES if tag in c[4].split()]
        row = [tag, len(cases)]
        for name, fn, langs in main_systems:
            sub = [c for c in cases if c[0] in langs]
            row.append(f"{score(fn, sub)[2]}/{len(sub)}" if sub else "–")
        trows.append(row)
    heads = ["tag", "n"] + [s[0] for s in main_systems]
    print("\nstart+end correct per tag\n")
    print(table(heads, trows))
    for name in ("dateparser", "jionlp"):
        if not {"dateparser": dateparser, "jionlp": jio}[name]:
            print(f"\n{name}: not installed (skipped)")
    if args.fails:
        for name, fails in all_fails.items():
            print("\n" + failures_section(name, fails))
    print(f"\nnetwork attempts: {len(NET_ATTEMPTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
