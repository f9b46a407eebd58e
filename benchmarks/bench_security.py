"""Benchmark of the risk guard's input layers (rules, classifier, both); prints Markdown tables.

Run from the repo root: ``.venv/bin/python benchmarks/bench_security.py [--misses N]``.

Sets (recall on attacks, false positives on benign text, per language and per attack type):

* **validation split** of ``training/injection/train.jsonl.gz`` (stratified 20 %, seed 0). The
  shipped model trained on it, so the benchmark retrains the shipped recipe *without* those rows
  (a few seconds) and scores them with that model: an honest held-out figure.
* **dev** — ``/work/shared/data/injection/{malicious,benign}_dev.jsonl`` (override the folder with
  ``NAVIGO_INJECTION_DATA``), read only when present. The shipped model trained on its licensed rows,
  so it is scored three times: by a model retrained without dev, by the shipped model
  ("trained on"; SMP2017 rows have no licence and were never trained on), and cross-fitted: each row by
  the shipped recipe trained without the fifth of the dev rows it belongs to (the honest estimate for
  unseen rows of the same sources, which the shipped model does train on).
* ``tests/data/injection_attacks_fresh.jsonl`` (own-written attacks, never trained on; a development set since
  round 5 steered by its totals), ``injection_attacks_fresh2.jsonl`` (written blind after round 5: the held-out
  attacks), the odd
  rows of ``tests/data/injection_benign_fresh.jsonl`` (the even rows and ``injection_benign_fresh3.jsonl`` calibrate the threshold; the odd
  rows' false positives were read in round 4, so they are a development half now) and
  ``tests/data/injection_benign_fresh2.jsonl`` (600 ordinary requests written blind; held out until every model
  had to pass it, a gate since round 5) and ``injection_benign_fresh4.jsonl`` (600 more, written blind in round 7:
  the held-out benign set); ``injection_benign_fresh5.jsonl`` (400 trigger-dense harmless requests, written blind in
  round 7; the rules' false positives on it were read and fixed, so it is a development set).
* the project's labelled sets (every other ``tests/data/*.jsonl``; some were training rows).

Latency: p50 / p99 per message on one thread (threadpoolctl), rules, classifier, both; the median of three passes.
NOTE: the rules were written by someone who had read the dev files: their dev figures flatter them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from threadpoolctl import threadpool_limits  # noqa: E402

from navigo_core.security import detect_prompt_injection  # noqa: E402
from navigo_core.security.classifier import injection_score, load_model, read_model  # noqa: E402
from navigo_core.security.rules import INJECTION_PREFIX, _scan, injection_rules  # noqa: E402
from navigo_core.security import train as T  # noqa: E402

DEV = Path(os.environ.get("NAVIGO_INJECTION_DATA", "/work/shared/data/injection"))
LAYERS = ("rules", "classifier", "both")


#: The blind benign sets scored as they are (file, what it is), in this order.
BLIND_BENIGN = (
    ("injection_benign_fresh2.jsonl", "600 ordinary requests written blind before round 4, never trained or calibrated on; "
                                      "a gate every model must pass since round 5"),
    ("injection_benign_fresh5.jsonl", "400 harmless requests dense with trigger words, written blind in round 7; a "
                                      "development set of the rules since"),
    ("injection_benign_fresh4.jsonl", "600 ordinary requests written blind in round 7, 120 per language with trigger "
                                      "words; never trained or calibrated on: the held-out benign set"),
)


def _jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f} % ({num}/{den})" if den else "–"


def _label(row: dict) -> int:
    return 1 if row.get("label") in (1, "1", "malicious") else 0


def _split(train: list[dict]):
    from sklearn.model_selection import train_test_split

    strat = [f"{r['label']}{r['lang']}{'roleplay_jailbreak' if r['subtype'] == 'jailbreak_template' and r['lang'] == 'zh' else r['subtype']}"
             for r in train]
    idx_tr, idx_va = train_test_split(np.arange(len(train)), test_size=0.2, random_state=0, stratify=strat)
    return [train[i] for i in sorted(idx_tr)], [train[i] for i in sorted(idx_va)]


def _retrain(rows: list[dict], tmp: Path):
    """The shipped recipe (train.CONFIG, calibration) on ``rows``; returns the loaded model."""
    meta, arrays = T.fit(rows, T.CONFIG)
    T.write_model(tmp, meta, arrays)
    model = read_model(tmp)
    model.thresholds.update(T.calibrate(model, T.calibration_rows(ROOT), T.labelled_benign_rows(ROOT, False),
                                        T.CONFIG["max_fpr_calibration"]))
    tmp.unlink()
    return model


def _base_rows(with_dev: bool) -> list[dict]:
    """Training rows of the shipped recipe except train.jsonl: own rows and repo benign (as
    ``train.load_training_rows`` reads them), then the licensed dev rows when asked."""
    rows = T.load_training_rows(ROOT)
    return [r for r in rows if r["group"] in ("own", "repo")] + ([r for r in rows if r["group"] == "dev"] if with_dev else [])


#: Folds of the dev cross-fit (row i of the dev files is in fold i % DEV_FOLDS).
DEV_FOLDS = 5


def _dev_folds(train: list[dict], dev: list[dict], tmp: Path) -> dict[str, np.ndarray]:
    """Decisions on every dev row by the shipped recipe trained on everything (train.jsonl, own and repo
    rows) and the licensed dev rows outside the row's fold; each fold's model is calibrated as shipped."""
    fold = {r["text"]: i % DEV_FOLDS for i, r in enumerate(dev)}
    public = [{"text": r["text"], "label": r["label"], "lang": r["lang"], "group": "public"} for r in train]
    rows = _base_rows(True)
    base, licensed = [r for r in rows if r["group"] != "dev"], [r for r in rows if r["group"] == "dev"]
    out: dict[str, np.ndarray] = {k: np.zeros(len(dev), dtype=bool) for k in LAYERS}
    out["score"] = np.zeros(len(dev))
    for f in range(DEV_FOLDS):
        model = _retrain(public + base + [r for r in licensed if fold.get(r["text"], -1) != f], tmp)
        idx = [i for i, r in enumerate(dev) if fold[r["text"]] == f]
        dec = _decide(model, [dev[i] for i in idx])
        for k, v in dec.items():
            out[k][idx] = v
    return out


def _decide(model, rows: list[dict]) -> dict[str, np.ndarray]:
    texts = [r["text"] for r in rows]
    rules = np.array([bool(_scan(t, injection_rules(), INJECTION_PREFIX)) for t in texts])
    scores = model.scores(texts) if texts else np.zeros(0)
    clf = np.array([s >= model.threshold(t) for t, s in zip(texts, scores)], dtype=bool)
    return {"rules": rules, "classifier": clf, "both": rules | clf, "score": scores}


def _tables(title: str, rows: list[dict], dec: dict[str, np.ndarray], misses: int = 0) -> None:
    print(f"### {title}\n")
    y = np.array([_label(r) for r in rows])
    langs = np.array([r["lang"] for r in rows])
    subs = np.array([r.get("subtype", "") for r in rows])
    print("| set | lang | " + " | ".join(LAYERS) + " |\n|---|---|" + "---|" * len(LAYERS))
    for lab, what in ((1, "attacks caught"), (0, "false positives")):
        if not (y == lab).any():
            continue
        for lang in ("en", "zh", "all"):
            m = (y == lab) & ((langs == lang) if lang != "all" else True)
            if m.sum():
                print(f"| {what} | {lang} | " + " | ".join(_pct(int(dec[k][m].sum()), int(m.sum())) for k in LAYERS) + " |")
    if (y == 1).any():
        print("\n| lang | attack type | " + " | ".join(LAYERS) + " |\n|---|---|" + "---|" * len(LAYERS))
        for lang, sub in sorted({(la, s) for la, s, yy in zip(langs, subs, y) if yy == 1}):
            m = (y == 1) & (langs == lang) & (subs == sub)
            print(f"| {lang} | {sub} | " + " | ".join(_pct(int(dec[k][m].sum()), int(m.sum())) for k in LAYERS) + " |")
    print()
    if misses:
        miss = [(r, s) for r, yy, b, s in zip(rows, y, dec["both"], dec["score"]) if yy == 1 and not b][:misses]
        fps = [(r, s) for r, yy, b, s in zip(rows, y, dec["both"], dec["score"]) if yy == 0 and b][:misses]
        for name, items in (("missed", miss), ("false positives", fps)):
            if items:
                print(f"{name}:")
                for r, s in items:
                    print(f"- [{r['lang']}/{r.get('subtype')}] score {s:.2f} {r['text'][:140]!r}")
                print()


def _latency_texts() -> list[str]:
    """The messages the latency table times: the validation split, the dev rows (when present), the own attack and
    benign sets and the project's labelled sets, as the tables above score them."""
    texts = [r["text"] for r in _split(_jsonl(ROOT / "training" / "injection" / "train.jsonl.gz"))[1]]
    for name in ("malicious_dev.jsonl", "benign_dev.jsonl"):
        if (DEV / name).exists():
            texts += [r["text"] for r in _jsonl(DEV / name)]
    data = ROOT / "tests" / "data"
    for name in (T.ATTACKS_FRESH, "injection_attacks_fresh2.jsonl", *(n for n, _ in BLIND_BENIGN)):
        if (data / name).exists():
            texts += [r["text"] for r in _jsonl(data / name)]
    if (data / T.BENIGN_FRESH).exists():
        texts += [r["text"] for i, r in enumerate(_jsonl(data / T.BENIGN_FRESH)) if i % 2 == 1]
    return texts + [r["text"] for r in T.labelled_benign_rows(ROOT, False)]


#: Timed passes over the messages: the VM this runs on varies by a third from run to run, so each layer's figures
#: are the median over the passes, with the range of p99 beside them.
PASSES = 3


def _latency(texts: list[str], passes: int = PASSES) -> None:
    layers = {
        "rules": lambda t: _scan(t, injection_rules(), INJECTION_PREFIX),
        "classifier": injection_score,
        "both (detect_prompt_injection)": detect_prompt_injection,
    }
    print(f"### Latency per message, one thread ({len(texts)} messages, median of {passes} passes)\n")
    print("| layer | p50 ms | p99 ms | p99 range ms | max ms |\n|---|---|---|---|---|")
    detect_prompt_injection("warm-up")
    injection_score("warm-up")
    for name, fn in layers.items():
        p50s, p99s, maxes = [], [], []
        for _ in range(passes):
            lat = []
            for t in texts:
                t0 = time.perf_counter_ns()
                fn(t)
                lat.append((time.perf_counter_ns() - t0) / 1e6)
            lat.sort()
            p50s.append(statistics.median(lat))
            p99s.append(lat[int(0.99 * (len(lat) - 1))])
            maxes.append(lat[-1])
        print(f"| {name} | {statistics.median(p50s):.3f} | {statistics.median(p99s):.3f} | "
              f"{min(p99s):.3f}–{max(p99s):.3f} | {statistics.median(maxes):.3f} |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", type=int, default=0,
                        help="print up to N missed / false-positive rows per set (not for the held-out fresh files)")
    parser.add_argument("--latency-only", action="store_true", help="only the latency table (no retraining)")
    args = parser.parse_args()
    if args.latency_only:
        with threadpool_limits(1):
            _latency(_latency_texts())
        return 0
    shipped = load_model()
    print("## Prompt-injection guard: rules, classifier, both\n")
    print(f"Shipped model: {T.MODEL_PATH.name}, {T.MODEL_PATH.stat().st_size / 1e6:.2f} MB, thresholds "
          f"{shipped.thresholds} ({shipped.meta.get('train_rows')} training rows).\n")
    tmp = ROOT / "benchmarks" / ".bench_model.npz"
    with threadpool_limits(1):
        train = _jsonl(ROOT / "training" / "injection" / "train.jsonl.gz")
        tr, va = _split(train)
        has_dev = (DEV / "malicious_dev.jsonl").exists() and (DEV / "benign_dev.jsonl").exists()
        t0 = time.perf_counter()
        held = _retrain([{"text": r["text"], "label": r["label"], "lang": r["lang"], "group": "public"} for r in tr]
                        + _base_rows(True), tmp)
        print(f"Validation model: shipped recipe without the {len(va)} validation rows "
              f"(trained in {time.perf_counter() - t0:.1f} s), thresholds {held.thresholds}.\n")
        _tables("Validation split of train.jsonl (held out)", va, _decide(held, va), args.misses)
        if has_dev:
            dev = _jsonl(DEV / "malicious_dev.jsonl") + _jsonl(DEV / "benign_dev.jsonl")
            no_dev = _retrain([{"text": r["text"], "label": r["label"], "lang": r["lang"], "group": "public"}
                               for r in train] + _base_rows(False), tmp)
            _tables("Dev, model retrained without dev (honest; thresholds "
                    f"{no_dev.thresholds})", dev, _decide(no_dev, dev), args.misses)
            _tables("Dev, shipped model — TRAINED ON the licensed dev rows (SMP2017 benign rows excepted)",
                    dev, _decide(shipped, dev))
            _tables(f"Dev, {DEV_FOLDS}-fold: the shipped recipe trained without one fold of the licensed dev rows, each "
                    "row scored by the model that did not see it (the honest figure for unseen rows of the dev "
                    "sources)", dev, _dev_folds(train, dev, tmp), args.misses)
            smp = [r for r in dev if "SMP2017" in r.get("source", "")]
            _tables("Dev SMP2017 benign rows (never trained on), shipped model", smp, _decide(shipped, smp))
        else:
            print(f"(dev data not found under {DEV}: dev tables skipped)\n")
        fresh_a = ROOT / "tests" / "data" / T.ATTACKS_FRESH
        fresh_b = ROOT / "tests" / "data" / T.BENIGN_FRESH
        if fresh_a.exists():
            rows = _jsonl(fresh_a)
            # the held-out evaluation files are never printed row by row (no --misses): nobody reads them
            _tables("injection_attacks_fresh.jsonl (attacks written independently, never trained on; its totals steered "
                    "rounds 4 and 5, so it is a development set now), shipped model", rows, _decide(shipped, rows))
        fresh_a2 = ROOT / "tests" / "data" / "injection_attacks_fresh2.jsonl"
        if fresh_a2.exists():  # written blind after round 5, never trained on nor used to choose anything: held out
            rows = _jsonl(fresh_a2)
            _tables("injection_attacks_fresh2.jsonl (420 attacks written blind after round 5; held out), shipped model",
                    rows, _decide(shipped, rows))
        if fresh_b.exists():
            rows = [dict(r, label=0) for i, r in enumerate(_jsonl(fresh_b)) if i % 2 == 1]
            _tables("injection_benign_fresh.jsonl, odd rows (test half; the even rows set the threshold)",
                    rows, _decide(shipped, rows))
            even = [dict(r, label=0) for i, r in enumerate(_jsonl(fresh_b)) if i % 2 == 0]
            _tables("injection_benign_fresh.jsonl, even rows (calibration, with fresh3 below)", even, _decide(shipped, even))
        fresh_b3 = ROOT / "tests" / "data" / T.BENIGN_CALIBRATION
        if fresh_b3.exists():  # written blind in round 5; calibration only (train.calibration_rows), never trained on
            rows = [dict(r, label=0) for r in _jsonl(fresh_b3)]
            _tables(f"{T.BENIGN_CALIBRATION} (600 ordinary requests written blind; with the even rows above, the "
                    "calibration set: ≤ 0.25 % of the 480 rows per language by construction)", rows, _decide(shipped, rows))
        for name, title in BLIND_BENIGN:  # never read by training (train.EVAL_GLOB)
            path = ROOT / "tests" / "data" / name
            if path.exists():
                rows = [dict(r, label=0) for r in _jsonl(path)]
                _tables(f"{name} ({title}), shipped model", rows, _decide(shipped, rows))
        print("### Project labelled sets (benign), shipped model\n")
        print("| set | rows | trained on | " + " | ".join(f"{k} FP" for k in LAYERS) + " |\n|---|---|---|"
              + "---|" * len(LAYERS))
        train_sets = {p.name for pat in T.REPO_BENIGN_TRAIN for p in (ROOT / "tests" / "data").glob(pat)}
        per_set: dict[str, list[dict]] = defaultdict(list)
        for r in T.labelled_benign_rows(ROOT, False):
            per_set[r["set"]].append(dict(r, label=0))
        for name, rows in sorted(per_set.items()):
            d = _decide(shipped, rows)
            print(f"| {name} | {len(rows)} | {'yes' if name in train_sets else 'no'} | "
                  + " | ".join(str(int(d[k].sum())) for k in LAYERS) + " |")
        print()
        _latency(_latency_texts())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
