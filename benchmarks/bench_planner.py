"""Benchmark of the trip planner; prints Markdown tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_planner.py [--runs 20] [--latency 0.5]``.

1. Offline engine: wall time of ``plan()`` (p50 / p99 / max) for a Chinese and an English
   request (first run excluded: imports and gazetteer load). Target: p50 ≤ 300 ms.
2. LLM mode against the fake OpenAI server (``tests/fakes/openai.py``) answering every call
   after ``--latency`` seconds: wall time of one plan vs the sequential sum of its LLM calls
   (what a one-agent-at-a-time pipeline would spend waiting), and LLM calls per plan.
   Target: wall ≤ 60 % of the sequential sum.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from navigo_core.config import Settings  # noqa: E402
from navigo_core.planner.supervisor import make_planner_deps, plan  # noqa: E402

REQUESTS = {
    "zh": "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步",
    "en": "From Beijing to Hangzhou, May 1 to May 5, 2 adults, budget 9000 CNY, we like tea and hiking",
}
NOW = datetime(2027, 4, 1, 9, 0, tzinfo=timezone.utc)


def _settings(**kw: object) -> Settings:
    return Settings(_env_file=None, flights_provider="offline", weather_provider="offline", places_provider="gazetteer",
                    **kw)


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def offline(runs: int) -> None:
    deps = make_planner_deps(_settings(), clock=lambda: NOW)
    print("## Offline engine\n")
    print("| request | runs | p50 ms | p99 ms | max ms | status |")
    print("|---|---|---|---|---|---|")
    for name, text in REQUESTS.items():
        plan(text, deps)  # warm-up
        times, status = [], ""
        for _ in range(runs):
            t0 = time.perf_counter()
            state = plan(text, deps)
            times.append((time.perf_counter() - t0) * 1000)
            status = state.status
        print(f"| {name} | {runs} | {statistics.median(times):.1f} | {_pct(times, 0.99):.1f} | {max(times):.1f} | {status} |")
    print()


class _Timed:
    """Wraps an LLMClient: records the duration of every ``structured`` call."""

    def __init__(self, llm: object) -> None:
        self.llm, self.calls, self.lock = llm, [], threading.Lock()

    def structured(self, messages, schema, **kw):  # noqa: ANN001
        t0 = time.perf_counter()
        try:
            return self.llm.structured(messages, schema, **kw)
        finally:
            with self.lock:
                self.calls.append((schema.__name__, time.perf_counter() - t0))

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self.llm, name)


def _responder(latency: float):
    def answer(body: dict) -> str:
        time.sleep(latency)
        text = json.dumps(body.get("response_format") or body.get("messages"))
        if "travel_style" in text:
            return json.dumps({"travel_style": "balanced", "prioritized_interests": ["tea"], "preferred_pace": "normal",
                               "accommodation_preference": "mid"})
        if "rationales" in text:
            found = re.search(r"Destinations: \[([^\]]*)\]", text)
            n = found.group(1).count(",") + 1 if found else 3
            return json.dumps({"rationales": [f"Reason {i + 1}." for i in range(n)]})
        if "is_injection" in text:
            return json.dumps({"is_injection": False, "reason": ""})
        if "summary" in text:
            return json.dumps({"summary": "A fine trip."})
        return json.dumps({})
    return answer


def llm_mode(runs: int, latency: float) -> None:
    from navigo_core.llm import LLMClient
    from tests.fakes.openai import FAKE_API_KEY, FakeOpenAI

    fake = FakeOpenAI().start()
    fake.responder = _responder(latency)
    try:
        settings = _settings(llm_base_url=fake.url + "/v1", llm_api_key=FAKE_API_KEY, llm_model="fake-model",
                             llm_timeout_s=10.0, llm_max_retries=0)
        print(f"## LLM mode (fake server, {latency:.2f} s per call)\n")
        print("| request | runs | wall p50 s | sequential sum p50 s | wall / sum | LLM calls per plan | modes |")
        print("|---|---|---|---|---|---|---|")
        for name, text in REQUESTS.items():
            walls, sums, counts, modes = [], [], [], ""
            with LLMClient(settings) as client:
                for _ in range(runs):
                    llm = _Timed(client)
                    deps = make_planner_deps(settings, clock=lambda: NOW, llm=llm)
                    t0 = time.perf_counter()
                    state = plan(text, deps)
                    walls.append(time.perf_counter() - t0)
                    sums.append(sum(d for _, d in llm.calls))
                    counts.append(len(llm.calls))
                    modes = ", ".join(sorted({f"{e.agent}:{e.mode}" for e in state.decision_log if e.mode != "rules"}))
            w, s = statistics.median(walls), statistics.median(sums)
            print(f"| {name} | {runs} | {w:.2f} | {s:.2f} | {100 * w / s:.0f} % | {statistics.median(counts):.0f} | {modes} |")
        print()
    finally:
        fake.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--llm-runs", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--no-llm", action="store_true")
    args = ap.parse_args()
    offline(args.runs)
    if not args.no_llm:
        llm_mode(args.llm_runs, args.latency)


if __name__ == "__main__":
    main()
