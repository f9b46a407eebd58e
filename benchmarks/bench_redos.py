"""Benchmark of linear-time text processing (issue 14); prints Markdown tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_redos.py [--quick]``.

1. The slowest regexes: every pattern navigo_core compiles while routing, guarding and parsing
   (``scripts/redos.py`` records them) on its adversarial inputs; the slowest ones are timed on
   10⁵ characters (each in its own process, capped at ``CAP_S``), and at the message limit
   (2,000 characters: what the chat, the planner and the CLI let through).
2. "hello" under load: the p50/p99 latency of routing "hello" (the gate, as the chat does) in one
   thread while another thread keeps routing a 100 KB message — through the gate (which reads at most
   the message limit), and through the chat service (which refuses it at the limit before any rule runs).

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

CAP_S = 120.0
BIG = 100_000
HELLO_RUNS = 300

_ONE = r"""
import json, re, sys, time
sys.path.insert(0, {scripts!r})
import redos
p = redos.Pattern({pattern!r}, {flags}, {origin!r})
text = dict(redos.adversarial_inputs(p, {n}))[{label!r}]
c = re.compile(p.pattern, p.flags)
t = time.perf_counter()
for _ in c.finditer(text):
    pass
print(json.dumps(time.perf_counter() - t))
"""


def time_one(row: dict, n: int, cap: float = CAP_S) -> float | None:
    """Seconds for one pattern on its adversarial input of ``n`` characters (None: over ``cap``)."""
    code = _ONE.format(scripts=str(ROOT / "scripts"), pattern=row["pattern"], flags=row["flags"],
                       origin=row["origin"], n=n, label=row["input"])
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return None
    return float(out.stdout.strip()) if out.returncode == 0 else None


def slowest_patterns(top: int) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LLM_API_KEY": "", "OPENAI_API_KEY": ""}
    code = ("import json, sys; sys.path.insert(0, 'scripts'); import redos; "
            "ps = redos.collect(); r = redos.report(ps, top=%d, skip=lambda p: redos.known(p) is not None); "
            "r['known'] = [{'pattern': p.pattern, 'flags': p.flags, 'origin': p.origin, 'fix': redos.known(p)} "
            "for p in ps if redos.known(p)]; print(json.dumps(r))" % top)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout)


def fmt(seconds: float | None, cap: float = CAP_S) -> str:
    return f"> {cap:.0f} s" if seconds is None else (f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.1f} s")


def regex_table(quick: bool) -> None:
    import redos

    rep = slowest_patterns(top=15 if quick else 40)
    rows = sorted(rep["timings"], key=lambda r: -r["large_s"])[: 8 if quick else 15]
    # the known super-linear patterns, each on its worst input found at the probe size
    for k in rep["known"]:
        p = redos.Pattern(k["pattern"], k["flags"], k["origin"])
        worst = max(redos.adversarial_inputs(p, 2000),
                    key=lambda li: redos.measure(__import__("re").compile(p.pattern, p.flags), li[1], reps=1))
        rows.insert(0, {"pattern": p.pattern, "flags": p.flags, "origin": p.origin, "input": worst[0],
                        "large_s": None, "fix": k["fix"]})
    print(f"## Slowest regexes on adversarial input ({rep['patterns']} patterns, {rep['inputs']} inputs)\n")
    print("| origin | pattern (start) | input | at 2,000 chars | at 10⁵ chars | growth ×4 | status |")
    print("|---|---|---|---|---|---|---|")
    worst_linear = 0.0
    for r in rows:
        big_cap = 20.0 if quick and r.get("fix") else CAP_S
        at_limit = time_one(r, 2000, cap=30)
        at_big = time_one(r, BIG, cap=big_cap)
        growth = "—" if r.get("large_s") is None else f"{r['large_s'] / max(r['small_s'], 1e-7):.2f}"
        status = "known, fix: " + r["fix"] if r.get("fix") else "linear"
        if not r.get("fix") and at_big is not None:
            worst_linear = max(worst_linear, at_big)
        pat = r["pattern"][:48].replace("|", "\\|")
        print(f"| {r['origin'].replace('navigo_core/', '')} | `{pat}` | {r['input'][:18]} | {fmt(at_limit)} | "
              f"{fmt(at_big, big_cap)} | {growth} | {status.replace('|', '/')} |")
    print(f"\nWorst linear pattern on 10⁵ characters: {fmt(worst_linear)}.\n")


def hello_latency() -> None:
    from navigo_core.chat import ChatService
    from navigo_core.config import Settings
    from navigo_core.errors import InputError
    from navigo_core.scenes import gate_classify, make_gate_context
    from navigo_core.store import Store

    ctx = make_gate_context(Settings(llm_api_key=""))
    store = Store.from_url(f"sqlite:///{tempfile.mkdtemp()}/bench.db")
    chat = ChatService(store, Settings(llm_api_key=""), gate_context=ctx)
    tid = chat.new_thread("bench")
    digits = "1" * BIG                     # the message, at 100 KB
    worst = "日游" + "三" * (BIG - 2)       # reached the slowest rule before it was bounded (trip planning)

    errors: set[str] = set()

    def raw(text: str):  # type: ignore[no-untyped-def]
        return lambda: gate_classify(text, ctx)

    def via_chat(text: str):  # type: ignore[no-untyped-def]
        def send() -> None:
            try:
                chat.send(tid, text)
            except InputError:  # over the limit: refused before anything runs
                pass
            except Exception as exc:  # noqa: BLE001 - a failing part elsewhere must not stop the measurement
                errors.add(f"{type(exc).__name__}")
        return send

    def measure(load, runs: int = HELLO_RUNS):  # type: ignore[no-untyped-def]
        stop = threading.Event()
        count = [0]

        def loop() -> None:
            while not stop.is_set():
                load()
                count[0] += 1

        worker = threading.Thread(target=loop, daemon=True) if load else None
        if worker:
            worker.start()
            time.sleep(0.05)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            gate_classify("hello", ctx)
            times.append((time.perf_counter() - t) * 1000)
            time.sleep(0.002)
        stop.set()
        if worker:
            worker.join()
        times.sort()
        return statistics.median(times), times[max(0, int(len(times) * 0.99) - 1)], times[-1], count[0]

    gate_classify("hello", ctx)  # warm up
    print(f'## Routing "hello" ({HELLO_RUNS} times) while another thread routes a long message\n')
    print("| other thread | hello p50 | hello p99 | hello max | long messages handled meanwhile |")
    print("|---|---|---|---|---|")
    cases = (("idle", None, HELLO_RUNS),
             ("100 KB of digits through the gate (cut at the limit)", raw(digits), HELLO_RUNS),
             ("100 KB of digits through the chat service (refused at the limit)", via_chat(digits), HELLO_RUNS),
             ("100 KB of 日游三三… through the gate (cut at the limit)", raw(worst), HELLO_RUNS),
             ("2,000 chars (the limit) of 日游三三… through the chat service", via_chat(worst[:2000]), HELLO_RUNS))
    for name, load, runs in cases:
        p50, p99, top, n = measure(load, runs)
        print(f"| {name} | {p50:.2f} ms | {p99:.2f} ms | {top:.2f} ms | {n if load else '—'} |", flush=True)
    if errors:
        print(f"\n(the chat service raised {', '.join(sorted(errors))} on some messages)")
    print()


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    hello_latency()
    regex_table(quick)
