"""Chinese places: origin / destination from short requests, ours vs jionlp.

Run: ``PYTHONPATH=/tmp/libeval .venv/bin/python benchmarks/libs/bench_places.py [--fails]``

* ours — ``parsing.place_phrases(text)`` (roles from 从/到/去/出发 patterns), and, when present, the
  newer ``navigo_core.understand.places.find_places`` (role cues + the offline gazetteer);
* jionlp.recognize_location — every place it finds, put in text order: two or more → the first is
  the origin and the last the destination, one → the destination (jionlp gives no roles);
* jionlp.parse_location — one administrative location (province/city/county) for the whole text;
  scored as the destination, and as "found either place".

A name matches when equal after dropping a trailing 市/省/县/区, or when one contains the other
("日本东京" for 东京). The first call of each jionlp function is timed separately (it loads its
dictionaries and models).
"""

from __future__ import annotations

import argparse
import re
import sys
import time

from _harness import NET_ATTEMPTS, block_network, call, failures_section, old_rules, optional, pct, table, timed_calls

block_network()

parsing = old_rules()  # the rules before navigo_core.understand (git history)

jio = optional("jionlp")

# (text, origin, destination); "" = not in the text
CASES: list[tuple[str, str, str]] = [
    ("温州到汉中的汽车", "温州", "汉中"), ("帮我查一下明天去北京的飞机", "", "北京"),
    ("下个月想从北京去成都吃火锅", "北京", "成都"), ("从上海出发去杭州，5月1日到5日", "上海", "杭州"),
    ("上海出发去杭州玩三天", "上海", "杭州"), ("我想去日本东京玩一周", "", "东京"), ("南京到黄山的汽车", "南京", "黄山"),
    ("明天从广州飞成都", "广州", "成都"), ("杭州三日游", "", "杭州"), ("规划一次西安之旅", "", "西安"),
    ("去三亚度假，预算一万", "", "三亚"), ("我在深圳，想周末去香港", "深圳", "香港"), ("北京飞上海的机票", "北京", "上海"),
    ("从成都自驾去九寨沟", "成都", "九寨沟"), ("周末带孩子去苏州园林看看", "", "苏州"), ("国庆想去厦门鼓浪屿", "", "厦门"),
    ("查询后天武汉到长沙的高铁", "武汉", "长沙"), ("坐高铁从南京到合肥", "南京", "合肥"), ("想去云南大理玩五天", "", "大理"),
    ("从重庆出发，去贵阳", "重庆", "贵阳"), ("我们一家三口想去青岛看海", "", "青岛"), ("去乌鲁木齐的火车票", "", "乌鲁木齐"),
    ("帮我订一张哈尔滨到沈阳的票", "哈尔滨", "沈阳"), ("下周去拉萨", "", "拉萨"), ("明天天津到北京的火车", "天津", "北京"),
    ("我想从昆明去丽江", "昆明", "丽江"), ("呼和浩特飞三亚", "呼和浩特", "三亚"), ("五一去桂林阳朔", "", "桂林"),
    ("带爸妈去黄山爬山", "", "黄山"), ("从香港去澳门一日游", "香港", "澳门"),
]

_SUFFIX = re.compile(r"(?:市|省|县|区|自治州|特别行政区)$")


def norm(name: str | None) -> str:
    return _SUFFIX.sub("", (name or "").strip())


def same(got: str | None, want: str) -> bool:
    g, w = norm(got), norm(want)
    if not w:
        return not g
    return g == w or (len(g) >= 2 and (g in w or w in g))


def ours(text: str) -> tuple[str, str]:
    return parsing.place_phrases(text)


UND_PLACES = optional("navigo_core.understand.places")  # the newer rule package (commit d865cc2)


def ours_new(text: str) -> tuple[str, str]:
    found = {m.role: m.text for m in UND_PLACES.find_places(text)}
    return found.get("origin", ""), found.get("destination", "")


def _names(rec: dict) -> list[str]:
    names: list[str] = []
    for item, _count in rec.get("domestic") or []:
        for key in ("county", "city", "province"):
            if item.get(key):
                names.append(item[key])
                break
    for item, _count in rec.get("foreign") or []:
        names.append(item.get("city") or item.get("country") or "")
    names += list((rec.get("others") or {}).keys())
    return [n for n in names if n]


def _position(text: str, name: str) -> int:
    for cand in (name, norm(name)):
        if cand and (i := text.find(cand)) >= 0:
            return i
    return 10**6


def jio_recognize(text: str) -> tuple[str, str]:
    rec = call(jio.recognize_location, text)
    if not isinstance(rec, dict):
        return "", ""
    seen: dict[int, str] = {}
    for n in _names(rec):
        pos = _position(text, n)
        if pos < 10**6 and pos not in seen:
            seen[pos] = norm(n)
    ordered = [seen[p] for p in sorted(seen)]
    ordered = [n for i, n in enumerate(ordered) if n not in ordered[:i]]
    if len(ordered) >= 2:
        return ordered[0], ordered[-1]
    return "", (ordered[0] if ordered else "")


def jio_parse(text: str) -> tuple[str, str]:
    r = call(jio.parse_location, text)
    if not isinstance(r, dict):
        return "", ""
    return "", r.get("county") or r.get("city") or r.get("province") or ""


def first_call(fn, text: str) -> float:
    t0 = time.perf_counter()
    fn(text)
    return (time.perf_counter() - t0) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fails", action="store_true")
    args = ap.parse_args()
    systems = [("old rules (8ecfb3b): parsing.place_phrases", ours)]
    if UND_PLACES:
        systems.append(("ours (new): understand.places.find_places", ours_new))
    firsts = {}
    if jio:
        firsts["jionlp.parse_location"] = first_call(jio_parse, CASES[0][0])
        firsts["jionlp.recognize_location"] = first_call(jio_recognize, CASES[0][0])
        systems += [("jionlp.recognize_location (text order)", jio_recognize), ("jionlp.parse_location", jio_parse)]
    n_orig = sum(1 for c in CASES if c[1])
    rows, fails = [], {}
    for name, fn in systems:
        o_ok = d_ok = both = anyplace = 0
        miss = []
        for text, o, d in CASES:
            go, gd = fn(text)
            a, b = same(go, o), same(gd, d)
            o_ok += bool(o) and a
            d_ok += b
            both += a and b
            anyplace += any(same(g, w) for g in (go, gd) if g for w in (o, d) if w)
            if not (a and b):
                miss.append(f"{text} → {go!r} → {gd!r} (want {o!r} → {d!r})")
        fails[name] = miss
        timing = timed_calls(fn, [c[0] for c in CASES])
        rows.append([name, pct(o_ok, n_orig), pct(d_ok, len(CASES)), pct(both, len(CASES)),
                     pct(anyplace, len(CASES)), timing["p50"], timing["p95"]])
    print(f"{len(CASES)} Chinese requests ({n_orig} with an origin)\n")
    print(table(["system", "origin", "destination", "both roles", "found a wanted place", "µs/call p50",
                 "µs/call p95"], rows))
    if firsts:
        print("\nfirst call (ms, loads dictionaries): " + ", ".join(f"{k} {v:,.0f}" for k, v in firsts.items()))
    else:
        print("\njionlp: not installed (skipped)")
    if args.fails:
        for name, miss in fails.items():
            print("\n" + failures_section(name, miss))
    print(f"\nnetwork attempts: {len(NET_ATTEMPTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
