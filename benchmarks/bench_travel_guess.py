"""How the gate's travel guess (``TRAVEL_GUESS`` in ``navigo_core/intent/classifier.py``) was chosen; prints tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_travel_guess.py`` (about 4 minutes: three fits).

When no rule and no sure L2 answer decided, the gate takes L2's most probable ordinary travel intent (a trip wish,
sights, a flight, train or hotel search) from this probability on, for a message that is on-topic or names a place.

1. The development sets of ordinary travel requests (``general_dev1``/``2``), each row scored by a classifier
   trained without it: the rows are split in two by their index, L2 is fitted on the seeds, the examples and one
   half (``examples.yaml`` minus both sets), and the other half goes through the gate, for each candidate bar.
2. The sets the bar must not hurt, with L2 trained on both halves as shipped: the business sets never trained on
   (``business_fresh2``-``12``, ``business_dev14``: they steered this choice, so they are development sets for it),
   the calibration sets, the shared CLINC and Chinese dev rows when ``../shared`` is there (out-of-scope rows sent
   to a scene: ``o``), and the labelled trip requests (how many reach the trip dialogue, an application scene, the
   help).

``general_fresh`` and ``business_fresh13``-``17`` are not read here: they are the held-out measure
(``benchmarks/bench_intent.py``). Single-threaded; not a test.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from navigo_core.config import get_settings  # noqa: E402
from navigo_core.intent.classifier import NAME, TRAVEL_GUESS, ClassifierIndex  # noqa: E402
from navigo_core.intent.evaluate import LabelledRow, load_labelled  # noqa: E402
from navigo_core.intent.router import IntentRouter  # noqa: E402
from navigo_core.intent.rules import default_rules  # noqa: E402
from navigo_core.intent.vector import Seed, load_seeds, load_thresholds  # noqa: E402
from navigo_core.scenes.evaluate import expected_scenes  # noqa: E402
from navigo_core.scenes.gate import gate_classify, make_gate_context  # noqa: E402

DATA = ROOT / "tests" / "data"
DEV = ("general_dev1.jsonl", "general_dev2.jsonl")
BUSINESS = tuple(f"business_fresh{n}.jsonl" for n in range(2, 13)) + ("business_dev14.jsonl",)
GUARDS = ("chat_fresh.jsonl", "intent_labelled.jsonl", "business_intents.jsonl", "calibration.jsonl", "out_of_scope.jsonl")
SHARED = ROOT.parent / "shared" / "data" / "intent"
REQUESTS = (DATA / "requests.jsonl", ROOT / "benchmarks" / "data" / "requests_fresh.jsonl")
ADMIN = {"travel_application", "travel_cancel", "travel_modify", "approval_query", "travel_order_query",
         "reimbursement", "policy_query"}
GRID: list[float | None] = [None, 0.6, 0.5, 0.45, 0.4, 0.35, 0.3, 0.25]


def _gate(extra: list[LabelledRow], base: list[Seed], cache: Path):  # type: ignore[no-untyped-def]
    seeds = base + [Seed(r.text, r.intent, r.lang) for r in extra]
    l2 = ClassifierIndex(seeds, load_thresholds()[NAME], cache_dir=cache)
    return make_gate_context(get_settings(), router=IntentRouter(default_rules(), l2)), l2


def _score(context, rows: list[LabelledRow]) -> tuple[int, int, int, int]:  # type: ignore[no-untyped-def]
    right = oos = n_oos = 0
    for r in rows:
        scene = gate_classify(r.text, replace(context, lang=None, active_flow=None)).scene_id
        right += scene in expected_scenes(r)
        if not r.in_scope:
            n_oos += 1
            oos += scene not in ("off_topic", "greeting")
    return right, len(rows), oos, n_oos


def main() -> int:
    dev = [r for name in DEV for r in load_labelled(DATA / name)]
    dev_texts = {r.text.lower() for r in dev}
    base = [s for s in load_seeds() if s.text.lower() not in dev_texts]  # examples.yaml without the dev sets
    cache = Path(tempfile.mkdtemp(prefix="navigo-travel-guess-"))
    print(f"## Travel guess: development sets, cross-fitted ({len(dev)} rows; shipped bar {TRAVEL_GUESS})\n")
    print("| bar | scene accuracy | out-of-scope rows sent to a scene |\n|---|---:|---:|")
    totals = {g: [0, 0, 0, 0] for g in GRID}
    for fold in (0, 1):
        held = [r for i, r in enumerate(dev) if i % 2 == fold]
        context, l2 = _gate([r for i, r in enumerate(dev) if i % 2 != fold], base, cache)
        for g in GRID:
            l2.travel_guess = g
            for i, x in enumerate(_score(context, held)):
                totals[g][i] += x
    for g in GRID:
        a, b, o, n = totals[g]
        print(f"| {g if g is not None else 'off'} | {a}/{b} = {a / b:.1%} | {o}/{n} |")

    context, l2 = _gate(dev, base, cache)
    guards = {name: load_labelled(DATA / name) for name in GUARDS}
    for name in ("clinc_travel_dev.jsonl", "zh_dev.jsonl"):
        if (SHARED / name).is_file():
            guards["shared " + name] = load_labelled(SHARED / name)
    business = [r for name in BUSINESS for r in load_labelled(DATA / name)]
    requests = [json.loads(line)["text"] for path in REQUESTS if path.is_file() for line in path.open(encoding="utf-8")]
    print("\n## The sets the bar must not hurt (L2 trained on both halves, as shipped)\n")
    print("| bar | business (never trained on) | " + " | ".join(guards) + " | trip requests: trip dialogue / application scene / help |")
    print("|---|" + "---|" * (len(guards) + 2))
    for g in GRID:
        l2.travel_guess = g
        a, b, _, _ = _score(context, business)
        cells = [f"{a}/{b} = {a / b:.2%}"]
        for rows in guards.values():
            right, n, oos, n_oos = _score(context, rows)
            cells.append(f"{right}/{n}" + (f" (o {oos}/{n_oos})" if n_oos else ""))
        scenes = [gate_classify(t, replace(context, lang=None, active_flow=None)).scene_id for t in requests]
        cells.append(f"{sum(s == 'trip_planning' for s in scenes)} / {sum(s in ADMIN for s in scenes)} / "
                     f"{sum(s in ('greeting', 'off_topic') for s in scenes)} of {len(scenes)}")
        print(f"| {g if g is not None else 'off'} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
