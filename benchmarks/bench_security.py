"""Benchmark of the risk guard's rule layer; prints Markdown tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_security.py [--misses N]``.

Data: ``/work/shared/data/injection/malicious_dev.jsonl`` and ``benign_dev.jsonl``
(fields text, label, lang, subtype; override the folder with ``NAVIGO_INJECTION_DATA``).
Skipped with a message when absent; the data is never committed nor read by tests.

Reports, per language and per subtype: detection rate on malicious rows, false-positive
rate on benign rows, and p50 / p99 latency of ``detect_prompt_injection`` per message.
NOTE: the rules were written by someone who had read these dev files, so the numbers
flatter the rules; treat them as an upper bound for unseen jailbreak templates.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from navigo_core.security import detect_prompt_injection  # noqa: E402

DATA = Path(os.environ.get("NAVIGO_INJECTION_DATA", "/work/shared/data/injection"))


def _rows(name: str) -> list[dict]:
    path = DATA / name
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f} % ({num}/{den})" if den else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", type=int, default=0, help="print up to N missed / false-positive rows")
    args = parser.parse_args()
    if not (DATA / "malicious_dev.jsonl").exists() or not (DATA / "benign_dev.jsonl").exists():
        print(f"skipped: injection data not found under {DATA}")
        return 0
    malicious, benign = _rows("malicious_dev.jsonl"), _rows("benign_dev.jsonl")
    detect_prompt_injection("warm-up")
    latencies: list[float] = []
    stats: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])  # (label, lang, subtype) → hits, n
    rule_hits: dict[str, int] = defaultdict(int)
    misses, false_pos = [], []
    for row in malicious + benign:
        t0 = time.perf_counter_ns()
        flags = detect_prompt_injection(row["text"])
        latencies.append((time.perf_counter_ns() - t0) / 1e6)
        key = (row["label"], row["lang"], row.get("subtype", ""))
        stats[key][0] += bool(flags)
        stats[key][1] += 1
        for f in flags:
            rule_hits[f] += 1
        if row["label"] == "malicious" and not flags:
            misses.append(row)
        if row["label"] != "malicious" and flags:
            false_pos.append((row, flags))

    print("## Prompt-injection rules on the dev data\n")
    print("| set | lang | rate |\n|---|---|---|")
    for label, what in (("malicious", "detected"), ("benign", "false positives")):
        for lang in ("en", "zh", "all"):
            hits = sum(v[0] for k, v in stats.items() if k[0] == label and lang in ("all", k[1]))
            n = sum(v[1] for k, v in stats.items() if k[0] == label and lang in ("all", k[1]))
            print(f"| {label} ({what}) | {lang} | {_pct(hits, n)} |")
    print("\n| label | lang | subtype | flagged |\n|---|---|---|---|")
    for (label, lang, subtype), (hits, n) in sorted(stats.items()):
        print(f"| {label} | {lang} | {subtype} | {_pct(hits, n)} |")
    lat = sorted(latencies)
    print(f"\nLatency per message: p50 {statistics.median(lat):.3f} ms, "
          f"p99 {lat[int(0.99 * (len(lat) - 1))]:.3f} ms, max {lat[-1]:.3f} ms ({len(lat)} messages)\n")
    print("| rule | hits |\n|---|---|")
    for rule, n in sorted(rule_hits.items(), key=lambda kv: -kv[1]):
        print(f"| {rule} | {n} |")
    if args.misses:
        print("\n### Missed malicious rows")
        for row in misses[: args.misses]:
            print(f"- [{row['lang']}/{row.get('subtype')}] {row['text'][:160]!r}")
        print("\n### False positives")
        for row, flags in false_pos[: args.misses]:
            print(f"- [{row['lang']}/{row.get('subtype')}] {flags} {row['text'][:160]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
