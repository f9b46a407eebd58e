"""Held-out check of the offline L2 classifier's business threshold; prints a Markdown table.

Run from the repo root: ``.venv/bin/python benchmarks/bench_l2_heldout.py`` (about 3 minutes).

Each tuning set (``build_l2_examples.TUNING``) is left out of training in turn: the
classifier is trained on the seeds and the other sets, its language thresholds are calibrated on
the calibration sets as ``intent calibrate`` does, and the left-out set is scored through the gate
(scene accuracy, what users get). The out-of-scope rows of the calibration sets are scored the same
way (share sent to a scene). One column per floor for the business-travel intents (``by_intent``
of the ``tfidf-lr`` entry in ``intent/data/thresholds.yaml``; "calibrated only": none). This is
how the shipped floor was chosen: the lowest that keeps the out-of-scope share ≤ 3 %. The fresh
sets (``*_fresh.jsonl``) are not read. Note that the rules were written with every tuning set in view, so the figures are
higher than on sentences nobody here has read.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from navigo_core.config import get_settings  # noqa: E402
from navigo_core.intent.classifier import NAME, OVERRIDABLE, ClassifierIndex  # noqa: E402
from navigo_core.intent.evaluate import calibrate, load_labelled  # noqa: E402
from navigo_core.intent.router import IntentRouter  # noqa: E402
from navigo_core.intent.rules import default_rules  # noqa: E402
from navigo_core.intent.vector import SEEDS_FILE, Seed, load_seeds, load_thresholds  # noqa: E402
from navigo_core.scenes.evaluate import score  # noqa: E402
from navigo_core.scenes.gate import gate_classify, make_gate_context  # noqa: E402

DATA = ROOT / "tests" / "data"
from build_l2_examples import ALWAYS, TUNING  # noqa: E402  (the sets L2 trains on; ALWAYS: in every fold)
CALIBRATION = ["intent_labelled.jsonl", "business_intents.jsonl", "out_of_scope.jsonl", "calibration.jsonl"]
GRID: list[float | None] = [None, 0.8, 0.7, 0.6, 0.5]


def _seeds(leave_out: str) -> list[Seed]:
    seeds = load_seeds(SEEDS_FILE)
    known = {s.text.lower() for s in seeds}
    for name in (*TUNING, *ALWAYS):
        if name == leave_out:
            continue
        for row in load_labelled(DATA / name):
            if row.text.lower() not in known:
                known.add(row.text.lower())
                seeds.append(Seed(row.text, row.intent, row.lang))
    return seeds


def main() -> int:
    t0 = time.perf_counter()
    settings = get_settings()
    cal_rows = [r for f in CALIBRATION for r in load_labelled(DATA / f)]
    oos_rows = [r for r in cal_rows if not r.in_scope]
    acc: dict[float | None, list[float]] = {g: [] for g in GRID}
    oos: dict[float | None, list[float]] = {g: [] for g in GRID}
    print("# L2 business threshold, each tuning set held out of training\n")
    print("| held-out set | rows | " + " | ".join(f"business floor {g}" if g else "calibrated only" for g in GRID) + " |")
    print("|---|---:|" + "---:|" * len(GRID))
    for name in TUNING:
        index = ClassifierIndex(_seeds(name), load_thresholds()[NAME])
        th = calibrate(IntentRouter(default_rules(), index), cal_rows, min_precision=0.97).thresholds
        rows = load_labelled(DATA / name)
        cells = []
        for g in GRID:
            l2 = index.with_thresholds(th.model_copy(update={"by_intent": dict.fromkeys(OVERRIDABLE, g) if g else {}}))
            ctx = make_gate_context(settings, router=IntentRouter(default_rules(), l2))
            acc[g].append(score(rows, lambda t, c=ctx: gate_classify(t, c)).accuracy)
            oos[g].append(1 - score(oos_rows, lambda t, c=ctx: gate_classify(t, c)).accuracy)
            cells.append(f"{acc[g][-1]:.1%}")
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |", flush=True)
    print("| **mean scene accuracy (held out)** | | " + " | ".join(f"**{statistics.mean(acc[g]):.2%}**" for g in GRID) + " |")
    print(f"| out-of-scope calibration rows sent to a scene ({len(oos_rows)}) | | "
          + " | ".join(f"{statistics.mean(oos[g]):.2%}" for g in GRID) + " |")
    shipped = sorted(set(load_thresholds()[NAME].by_intent.items()))
    print(f"\nShipped floors: {shipped or 'none'}. Total {time.perf_counter() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
