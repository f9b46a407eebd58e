"""Benchmark of the LLM mode against any OpenAI-compatible server; prints Markdown tables.

Run from the repo root::

    .venv/bin/python benchmarks/bench_llm.py                       # against the scripted fake server (make bench)
    .venv/bin/python benchmarks/bench_llm.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-1.5b-instruct

A fixed set, the same for every server: L3 intent messages (the router's LLM layer), the LLM injection
scan on benign messages (its false positives), clarification dialogues in English and Chinese (LLM
mode, streamed), and trip plans (the planner with the LLM). It prints, per task kind: the parse rate
(model answers that were usable JSON or text), the repair rate (structured answers that needed the
repair turn), the fallback rate (tasks where the deterministic path was used instead), the outputs
rejected by each check, language errors, p50 / p95 latency per call, and tokens per call (completion
tokens reported by the server; pieces for streams).

Without ``--base-url`` the fake server of ``tests/fakes/openai.py`` answers: sensibly most of the time,
and like a small model some of the time (English in a Chinese thread, narration, an empty marker, a
summary that drops the dates, a runaway stream, a false "injection"), so every check is exercised.
Settings are the ones recommended for local servers (README); ``--deadline``, ``--timeout`` override.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from navigo_core.config import Settings  # noqa: E402

NOW = datetime(2027, 4, 1, 9, 0, tzinfo=timezone.utc)
TODAY = date(2027, 4, 1)

L3_MESSAGES = [
    ("en", "I need to sort out something for my team's offsite in Chengdu next month"),
    ("en", "can you help me with the thing we talked about for the Kyoto visit"),
    ("en", "my manager wants me in Shenzhen on Thursday, what do I do first"),
    ("en", "is there a cheaper way to handle my trip expenses for last week's Xi'an visit"),
    ("en", "what should I know before heading to the Guangzhou fair"),
    ("zh", "下个月团队要去成都团建，我该先弄什么"),
    ("zh", "领导让我周四去深圳一趟，先办什么手续"),
    ("zh", "上周去西安的那些费用该怎么处理"),
    ("zh", "去广交会之前需要准备点啥"),
    ("zh", "帮我看看京都那件事进展如何"),
]
SCAN_BENIGN = [
    "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking",
    "Ignore the rain, we go anyway: 3 days in Hangzhou from May 1",
    "forget my last stop and add Suzhou instead",
    "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步",
    "别管天气了，我们照样去，五一去杭州三天",
    "把刚才那个站删掉，换成苏州",
]
DIALOGUES = {
    "en-1": ["plan a trip for me", "Hangzhou, from Shanghai", "May 1 to May 5", "2 adults", "budget 6000 CNY"],
    "en-2": ["I'd like a long weekend in Kyoto", "from Shanghai", "2027-05-01 to 2027-05-03, 2 people, $3,000"],
    "zh-1": ["帮我规划一次旅行", "从上海到杭州", "5月1日到5日", "2个人", "预算6000元"],
    "zh-2": ["我想去成都玩", "从北京出发，五一去，三个人", "预算一万五"],
}
PLANS = {
    "en": "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking",
    "zh": "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步",
}
CHECK_LABELS = {
    "reply:language": "reply in the wrong language", "reply:narration": "narration (\"the user wants…\")",
    "reply:no_question": "reply without a question", "reply:offline": "reply replaced by the offline question",
    "summary:empty_block": "empty [INTENT_READY] block", "summary:repair_failed": "summary repair failed",
    "summary:language": "summary in the wrong language", "summary:error_echo": "summary echoes an error",
    "summary:missing": "summary dropped a fact", "summary:new_place": "summary added a place",
    "summary:new_name": "summary added a name", "summary:deterministic": "deterministic summary used",
}


class Recorder:
    """Wraps an LLMClient: keeps the raw structured answers (to judge their language)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.answers: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def structured(self, *args: Any, **kwargs: Any) -> Any:
        out = self.client.structured(*args, **kwargs)
        self.answers.append(out)
        return out


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))] if s else 0.0


def _rate(n: int, d: int) -> str:
    return f"{100 * n / d:.0f} % ({n}/{d})" if d else "–"


# --- the scripted fake (no --base-url) ---------------------------------------------------------

def _fake_responder():
    """Plausible answers by what the request asks for, with a small model's slips now and then."""
    from tests.fakes.openai import Reply

    count = Counter()

    def answer(body: dict) -> Any:
        msgs = body["messages"]
        system = msgs[0]["content"] if msgs and msgs[0]["role"] == "system" else ""
        schema = json.dumps(body.get("response_format") or "") + system
        user = msgs[-1]["content"] if msgs else ""
        if body.get("stream"):
            return _clarify_reply(body, count)
        if "is_injection" in schema:
            count["scan"] += 1
            slip = count["scan"] % 3 == 1  # a false positive on every third benign message
            return json.dumps({"is_injection": slip, "confidence": 0.9 if slip else 0.8, "reason": "looks fine"})
        if "primary_intent" in schema:
            count["l3"] += 1
            zh = bool(re.search(r"[\u4e00-\u9fff]", user))
            reason = "用户在问出差安排" if zh else "asks about a business trip"
            if count["l3"] % 4 == 0:
                reason = "asks about a business trip" if zh else reason  # an English reason for a Chinese user
            return json.dumps({"intents": [{"intent": "travel_application", "target_agent": "x", "confidence": "medium",
                                            "reason": reason}], "primary_intent": "travel_application",
                               "multi_intent": False, "overall_reason": reason}, ensure_ascii=False)
        if "travel_style" in schema:
            return json.dumps({"travel_style": "relaxed", "prioritized_interests": ["tea"], "preferred_pace": "slow",
                               "accommodation_preference": "mid"})
        if "rationales" in schema:
            zh = "Chinese" in system
            return json.dumps({"rationales": ["Xi'an is famous for hot pot." if zh else "Hangzhou suits a tea lover."]},
                              ensure_ascii=False)
        if "summary" in schema:
            count["summary"] += 1
            text = user if count["summary"] % 2 else "A calm trip of tea and hills in Hangzhou."  # drops the dates
            return json.dumps({"summary": text}, ensure_ascii=False)
        if "objective" in schema:  # the clarification's summary repair
            return json.dumps({"objective": "Plan a trip", "constraints": [], "assumptions": []})
        if "budget_amount" in schema:
            return json.dumps({})
        return Reply(content="{}")

    return answer


def _clarify_reply(body: dict, count: Counter) -> Any:
    from tests.fakes.openai import Reply

    count["clarify"] += 1
    n = count["clarify"]
    msgs = body["messages"]
    zh = "Chinese" in msgs[0]["content"]
    ending = msgs[-1]["role"] == "system"
    if ending:
        if n % 3 == 0:
            return Reply(content=None, chunks=["好的。" if zh else "OK. ", "[INTENT_READY]"])  # an empty block
        block = json.dumps({"objective": "规划杭州之行" if zh else "Plan a trip to Hangzhou",
                            "constraints": ["预算6000元" if zh else "budget 6000 CNY"], "assumptions": []},
                           ensure_ascii=False)
        return Reply(content=None, chunks=["好的，信息够了。" if zh else "Thanks, that is all. ", "**[INTENT_READY]**\n", block])
    if n == 2:
        return Reply(content=None, chunks=["Where ", "do you "], forever=True)  # a runaway stream
    if n % 4 == 1 and zh:
        return Reply(content=None, chunks=["When would you ", "like to go?"])  # English in a Chinese thread
    if n % 5 == 3:
        return Reply(content=None, chunks=["The user wants ", "a trip."])  # narration, no question
    return Reply(content=None, chunks=["您打算哪天出发？" if zh else "When would you like to leave?"])


# --- the runs --------------------------------------------------------------------------------

def run_l3(client: Any) -> dict[str, Any]:
    from navigo_core.intent.llm_layer import LLMIntentLayer, _fits_lang

    rec = Recorder(client)
    layer = LLMIntentLayer(rec)
    parsed = fallback = lang_err = 0
    for lang, text in L3_MESSAGES:
        before = len(rec.answers)
        answer = layer.classify(text, lang)
        if len(rec.answers) > before:
            parsed += 1
            reply = rec.answers[-1]
            lang_err += sum(1 for i in reply.intents if i.reason and not _fits_lang(i.reason, lang))
        if not answer.hit:
            fallback += 1
    return {"tasks": len(L3_MESSAGES), "parsed": parsed, "fallback": fallback, "language": lang_err, "checks": Counter()}


def scan_texts(extra: int) -> list[str]:
    """The fixed benign messages plus ``extra`` rows of the held-out (odd) half of injection_benign_fresh.jsonl."""
    path = ROOT / "tests" / "data" / "injection_benign_fresh.jsonl"
    rows = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [*SCAN_BENIGN, *rows[1::2][:extra]]


def run_scan(client: Any, texts: list[str]) -> dict[str, Any]:
    from navigo_core.security.llm_scan import llm_scan_result

    said = blocked = parsed = errors = 0
    for text in texts:
        result = llm_scan_result(text, client)
        parsed += result.verdict is not None
        errors += result.error is not None
        said += bool(result.verdict and result.verdict.is_injection)
        blocked += bool(result.flags)
    checks = Counter({"the model said injection (raw false positives)": said,
                      "blocked (false positives after the advisory rule)": blocked})
    return {"tasks": len(texts), "parsed": parsed, "fallback": errors, "language": 0, "checks": checks}


def run_clarify(client: Any, settings: Settings) -> dict[str, Any]:
    from navigo_core.clarify import ClarifyAgent
    from navigo_core.providers.places import GazetteerPlaceProvider

    agent = ClarifyAgent(settings, llm=client, places=GazetteerPlaceProvider(), today=TODAY)
    checks: Counter = Counter()
    turns = fallback = lang_err = errors = done = 0
    for name, lines in DIALOGUES.items():
        state = agent.start(name, lines[0])
        for line in [*lines, "that's enough" if name.startswith("en") else "可以了"]:
            turn, new = agent.turn(state, line)
            turns += 1
            seen = set()
            for c in turn.checks:  # each kind of check once per turn
                key = next((k for k in CHECK_LABELS if c == k or c.startswith(k + ":")), None)
                seen.add(CHECK_LABELS[key] if key else c.split(":")[0])
            checks.update(seen)
            lang_err += sum(1 for c in turn.checks if c.endswith(":language"))
            if turn.status == "error":
                errors += 1
                fallback += 1
                state = state.model_copy(update={"mode": "offline"})
                turn, new = agent.turn(state, line)  # continue offline, as the page offers
                state = new.model_copy(update={"mode": "llm"})
            else:
                fallback += any(c in ("reply:offline", "summary:deterministic") for c in turn.checks)
                state = new
            if turn.status == "done":
                done += 1
                break
    checks["dialogues ended with a summary"] = done
    return {"tasks": turns, "parsed": turns - errors, "fallback": fallback, "language": lang_err, "checks": checks}


def run_plans(client: Any, settings: Settings) -> dict[str, Any]:
    from navigo_core.planner.supervisor import make_planner_deps, plan

    checks: Counter = Counter()
    tasks = fallback = lang_err = failed = 0
    deps = make_planner_deps(settings, clock=lambda: NOW, llm=client)
    for text in PLANS.values():
        state = plan(text, deps)
        for e in state.decision_log:
            if e.output_summary == "failed":  # an agent raised (never an LLM failure: those fall back)
                checks[f"{e.agent}: agent failed"] += 1
            if e.agent not in ("preference", "destination", "synthesizer", "risk_guard_llm"):
                continue
            if e.mode == "rules":
                continue
            tasks += 1
            fallback += e.mode == "llm_fallback"
            for ev in e.evidence:
                m = re.search(r"rejected \((.*?)\)", ev)
                if m:
                    for p in m.group(1).split("; "):
                        kind = re.sub(r"\s+\S+$", "", p) if p.startswith(("missing", "new", "names")) else p
                        checks[f"{e.agent}: {kind}"] += 1
                        lang_err += p == "language"
                if ev.startswith("LLM failed ("):
                    failed += 1
                    checks[f"{e.agent}: {ev[len('LLM failed ('):].split(')')[0].split(':')[0]}"] += 1
                elif ev.startswith("LLM failed:"):
                    failed += 1
                    checks[f"{e.agent}: LLM error"] += 1
        checks[f"plan {state.status}"] += 1
    return {"tasks": tasks, "parsed": tasks - failed, "fallback": fallback, "language": lang_err, "checks": checks}


def call_table(calls: list[dict[str, Any]]) -> None:
    print("| call kind | calls | usable | repaired | bound hit | other error | p50 s | p95 s | tokens per call |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in ("structured", "stream", "complete"):
        rows = [c for c in calls if c["kind"] == kind]
        if not rows:
            continue
        ok = sum(1 for c in rows if c.get("outcome") == "ok")
        repaired = sum(1 for c in rows if c.get("repaired"))
        bound = sum(1 for c in rows if c.get("bound"))
        other = len(rows) - ok - bound - sum(1 for c in rows if c.get("outcome") == "closed")
        secs = [c["seconds"] for c in rows]
        toks = [c["completion_tokens"] for c in rows if c.get("completion_tokens") is not None]
        per = f"{statistics.mean(toks):.0f}" if toks else "–"
        print(f"| {kind} | {len(rows)} | {_rate(ok, len(rows))} | {_rate(repaired, len(rows))} | {bound} | {other} | "
              f"{_pct(secs, 0.5):.2f} | {_pct(secs, 0.95):.2f} | {per} |")
    bounds = Counter(c["bound"] for c in calls if c.get("bound"))
    if bounds:
        print(f"\nBounds hit: {', '.join(f'{k} {v}' for k, v in sorted(bounds.items()))}.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default="", help="an OpenAI-compatible server (default: the scripted fake)")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--api-key", default="local", help="API key sent to --base-url (local servers ignore it)")
    parser.add_argument("--deadline", type=float, default=None, help="LLM_DEADLINE_S (default 120 for a real server)")
    parser.add_argument("--timeout", type=float, default=None, help="LLM_TIMEOUT_S (default 60 for a real server)")
    parser.add_argument("--structured-output", default="auto", help="LLM_STRUCTURED_OUTPUT")
    parser.add_argument("--max-tokens-structured", type=int, default=384, help="LLM_MAX_TOKENS_STRUCTURED")
    parser.add_argument("--max-tokens-stream", type=int, default=256, help="LLM_MAX_TOKENS_STREAM")
    parser.add_argument("--only", default="l3,scan,clarify,plans", help="task kinds to run (comma-separated)")
    parser.add_argument("--scan-benign", type=int, default=24,
                        help="held-out benign rows of injection_benign_fresh.jsonl for the scan (besides the fixed 6)")
    args = parser.parse_args(argv)

    from navigo_core.llm import LLMClient

    fake = None
    if args.base_url:
        base_url, key, deadline, timeout = args.base_url, args.api_key, args.deadline or 120.0, args.timeout or 60.0
    else:
        from tests.fakes.openai import FAKE_API_KEY, FakeOpenAI

        fake = FakeOpenAI().start()
        fake.responder = _fake_responder()
        base_url, key, deadline, timeout = fake.url + "/v1", FAKE_API_KEY, args.deadline or 2.0, args.timeout or 1.0
    settings = Settings(_env_file=None, llm_base_url=base_url, llm_api_key=key, llm_model=args.model,
                        llm_timeout_s=timeout, llm_deadline_s=deadline, llm_stream_gap_s=min(15.0, timeout),
                        llm_max_retries=0, llm_parallel=1, llm_max_tokens_stream=args.max_tokens_stream,
                        llm_max_tokens_structured=args.max_tokens_structured,
                        llm_structured_output=args.structured_output, flights_provider="offline",
                        weather_provider="offline", places_provider="gazetteer")
    started = time.monotonic()
    try:
        with LLMClient(settings) as client:
            results: dict[str, dict[str, Any]] = {}
            kinds: dict[str, list[dict[str, Any]]] = {}
            tasks = (("l3", "L3 intent", lambda: run_l3(client)),
                     ("scan", "injection scan (benign)", lambda: run_scan(client, scan_texts(args.scan_benign))),
                     ("clarify", "clarification turns", lambda: run_clarify(client, settings)),
                     ("plans", "plan LLM steps", lambda: run_plans(client, settings)))
            wanted = {w.strip() for w in args.only.split(",")}
            for key, name, fn in tasks:
                if key not in wanted:
                    continue
                before = len(client.calls)
                results[name] = fn()
                kinds[name] = list(client.calls)[before:]
            calls = list(client.calls)
    finally:
        if fake is not None:
            fake.stop()
    where = "the scripted fake server" if fake is not None else f"{args.model} at {args.base_url}"
    print(f"## LLM benchmark: {where}\n")
    print(f"Settings: LLM_TIMEOUT_S={timeout:g}, LLM_DEADLINE_S={deadline:g}, LLM_PARALLEL=1, LLM_MAX_RETRIES=0, "
          f"LLM_MAX_TOKENS_STREAM={args.max_tokens_stream}, LLM_MAX_TOKENS_STRUCTURED={args.max_tokens_structured}, "
          f"LLM_STRUCTURED_OUTPUT={args.structured_output}; {time.monotonic() - started:.0f} s in all.\n")
    print("| task | tasks | parsed | fallback | language errors | LLM calls | p50 s | p95 s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        secs = [c["seconds"] for c in kinds[name]]
        print(f"| {name} | {r['tasks']} | {_rate(r['parsed'], r['tasks'])} | {_rate(r['fallback'], r['tasks'])} | "
              f"{r['language']} | {len(kinds[name])} | {_pct(secs, 0.5):.2f} | {_pct(secs, 0.95):.2f} |")
    print()
    call_table(calls)
    print("\n| check | outputs rejected or events |\n|---|---|")
    for name, r in results.items():
        for check, n in sorted(r["checks"].items()):
            print(f"| {name}: {check} | {n} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
