"""Cost of each library: version, licence, installed size, import time, first call, and the p50 of a
whole request parse with and without it.

Run: ``PYTHONPATH=/tmp/libeval .venv/bin/python benchmarks/libs/bench_startup.py [--runs 3]``

* size: the files of the distribution and of each dependency it pulls in that the project's
  ``requirements.txt`` does not already bring (read from the installed RECORDs);
* import / first call: median over ``--runs`` fresh interpreters (``-X importtime`` is not used;
  wall time around ``import`` and around the first real call);
* whole request: our five rule extractors (dates, budget, travellers, places, interests) on a
  mix of Chinese and English requests, then the same plus each library's call for its task.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import statistics
import subprocess
import sys
from datetime import date
from pathlib import Path

from _harness import ROOT, block_network, dist_version, old_rules, optional, table, timed_calls

from packaging.requirements import Requirement  # noqa: E402

LIBS = [  # (label, dist, module, first-call snippet)
    ("jionlp (time)", "jionlp", "jionlp", "m.ner.extract_time('明天出发去杭州玩三天', time_base=1804656000)"),
    ("jionlp (money)", "jionlp", "jionlp", "m.ner.extract_money('预算两万元')"),
    ("jionlp (location)", "jionlp", "jionlp", "m.recognize_location('下个月想从北京去成都吃火锅')"),
    ("dateparser", "dateparser", "dateparser", "from dateparser.search import search_dates; "
                                               "search_dates('June 10 to June 14', languages=['en','zh'])"),
    ("holidays", "holidays", "holidays", "m.country_holidays('CN', years=2027, language='en_US')"),
    ("chinesecalendar", "chinesecalendar", "chinese_calendar",
     "import datetime; m.is_holiday(datetime.date(2026, 10, 1))"),
    ("cn2an", "cn2an", "cn2an", "m.cn2an('一万五', 'smart')"),
]
REQUESTS = [
    "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步",
    "下个月想从北京去成都吃火锅，预算一万五，玩三天",
    "帮我查一下明天去北京的飞机",
    "2027年10月1日到10月7日，一家三口去三亚，人均三千",
    "From Beijing to Hangzhou, May 1 to May 5, 2 adults, budget 9000 CNY, we like tea and hiking",
    "Please plan a trip from Boston to Denver from April 11th to April 15th, 2027 with a budget of $2,000",
    "next friday to Tokyo for a week, 2 adults 1 kid, 3k EUR",
    "this weekend in Paris, solo, budget $1,700",
]


def _project_dists() -> set[str]:
    names = set()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.add(Requirement(line).name.lower().replace("_", "-"))
    # and everything those pull in, as installed in this interpreter
    todo, seen = list(names), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo += _deps(n)
    return seen


def _deps(dist: str) -> list[str]:
    try:
        reqs = md.requires(dist) or []
    except md.PackageNotFoundError:
        return []
    out = []
    for r in reqs:
        req = Requirement(r)
        if req.marker and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(req.name.lower().replace("_", "-"))
    return out


def _size(dist: str) -> int:
    try:
        files = md.distribution(dist).files or []
    except md.PackageNotFoundError:
        return 0
    total = 0
    for f in files:
        p = Path(f.locate())
        if p.is_file():
            total += p.stat().st_size
    return total


def _licence(dist: str) -> str:
    meta = md.metadata(dist)
    lic = meta.get("License-Expression") or meta.get("License") or ""
    if not lic or len(lic) > 40 or lic == "UNKNOWN":
        lic = "; ".join(c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License"))
    return lic or "?"


def footprint(dist: str, project: set[str]) -> tuple[int, list[str]]:
    """Bytes of ``dist`` plus its new dependencies; the new dependencies as 'name version (licence)'."""
    total, extra, todo, seen = _size(dist), [], _deps(dist), {dist}
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo += _deps(n)
        if n in project:
            continue
        total += _size(n)
        extra.append(f"{n} {dist_version(n)} ({_licence(n)}, {_size(n) / 2**20:.1f} MB)")
    return total, extra


def startup(module: str, snippet: str, runs: int) -> tuple[float, float]:
    code = ("import time, json; import sys; sys.path.insert(0, %r); import _harness; _harness.block_network(); "
            "t0 = time.perf_counter(); import %s as m; t1 = time.perf_counter(); %s; t2 = time.perf_counter(); "
            "print(json.dumps([t1 - t0, t2 - t1, len(_harness.NET_ATTEMPTS)]))" % (str(Path(__file__).parent), module,
                                                                                    snippet))
    imports, firsts = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, cwd=ROOT)
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("[")]
        if not line:
            return float("nan"), float("nan")
        a, b, net = json.loads(line[-1])
        if net:
            print(f"  {module}: {net} network attempts")
        imports.append(a * 1e3)
        firsts.append(b * 1e3)
    return statistics.median(imports), statistics.median(firsts)


def whole_request_rows() -> list[list[object]]:
    parsing = old_rules()  # the rules before navigo_core.understand (git history)

    today = date(2027, 3, 10)

    def ours(text: str) -> None:
        parsing.parse_dates(text, today)
        parsing.parse_budget(text)
        parsing.parse_travellers(text)
        parsing.place_phrases(text)
        parsing.parse_interests(text)

    rows = []
    und = optional("navigo_core.understand")
    if und:
        und.parse_request(REQUESTS[0], today=today)  # gazetteer load
        t = timed_calls(lambda s: und.parse_request(s, today=today), REQUESTS, repeat=20)
        rows.append(["ours (new): understand.parse_request (incl. gazetteer resolution)", t["p50"], t["p95"]])
    base = timed_calls(ours, REQUESTS, repeat=20)
    rows.append(["ours (5 rule extractors)", base["p50"], base["p95"]])
    dp = optional("dateparser")
    if dp:
        from datetime import datetime

        from dateparser.search import search_dates
        settings = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": datetime(2027, 3, 10)}
        t = timed_calls(lambda s: (ours(s), search_dates(s, languages=["en", "zh"], settings=settings)), REQUESTS,
                        repeat=5)
        rows.append(["ours + dateparser.search_dates", t["p50"], t["p95"]])
    jio = optional("jionlp")
    if jio:
        t = timed_calls(lambda s: (ours(s), jio.ner.extract_time(s, time_base=1804656000)), REQUESTS, repeat=5)
        rows.append(["ours + jionlp.ner.extract_time", t["p50"], t["p95"]])
        t = timed_calls(lambda s: (ours(s), jio.ner.extract_time(s, time_base=1804656000), jio.ner.extract_money(s),
                                   jio.recognize_location(s)), REQUESTS, repeat=5)
        rows.append(["ours + jionlp time + money + location", t["p50"], t["p95"]])
    c2a = optional("cn2an")
    if c2a:
        import warnings
        warnings.simplefilter("ignore")
        t = timed_calls(lambda s: ours(c2a.transform(s, "cn2an")), REQUESTS, repeat=20)
        rows.append(["cn2an.transform then ours", t["p50"], t["p95"]])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    project = _project_dists()
    rows = []
    for label, dist, module, snippet in LIBS:
        if dist_version(dist) == "not installed":
            rows.append([label, "not installed", "", "", "", "", ""])
            continue
        size, extra = footprint(dist, project)
        imp, first = startup(module, snippet, args.runs)
        rows.append([label, dist_version(dist), _licence(dist), f"{size / 2**20:.1f} MB", imp, first,
                     "; ".join(extra) or "–"])
    print(table(["library", "version", "licence", "installed size (incl. new deps)", "import ms", "first call ms",
                 "new dependencies"], rows))
    block_network()
    print(f"\n## Whole request parse ({len(REQUESTS)} requests, zh and en; target p50 ≤ 5 ms)\n")
    print(table(["pipeline", "p50 µs", "p95 µs"], whole_request_rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
