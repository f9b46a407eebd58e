"""Round-3 model selection (issue 11, Chinese recall): the benchmark's protocol with cached features.

Run: ``PYTHONPATH=. .venv/bin/python training/injection/experiments_round3.py [--cv] [--loso] [--folds] [name ...]``
(names: :data:`CONFIGS`; none = all). Not part of the build. Per configuration it prints

* **val**: the benchmark's validation figure — the recipe retrained without the validation split of
  train.jsonl (stratified 20 %, seed 0), thresholds calibrated exactly as ``make model`` does (≤ 1 % false
  positives on the even rows of injection_benign_fresh.jsonl, none on the labelled sets), recall of rules
  OR classifier per language; ``valFP`` on the split's benign rows (``ord``: without the role prompts);
* **own-B FP**: false positives on the held-out half of own_benign.jsonl (split by text hash) when that half
  is left out of training (``ownB_out``);
* **dev**: the shared dev set scored by the recipe retrained without dev (``--dev``);
* ``--cv``: 5-fold CV over train.jsonl (seed 1; ``--cv2``: seeds 1 and 2), recall at calibrated thresholds, *excluding every
  Chinese validation attack* (the validation misses were read while designing the shape features);
* ``--loso``: leave one own attack family out (threshold at 1 % FPR on benign validation rows + own-B);
* ``--folds``: 2-fold over the round-3 Chinese benign rows (own_benign.jsonl from row 1,180 on): train
  without one half, report false positives on it — how benign text of the shapes' form fares unseen.

The even calibration rows are only ever scored (for the threshold), never printed; the odd half and the
fresh attack file are not read here.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_security as B  # noqa: E402
from navigo_core.security import features as F  # noqa: E402
from navigo_core.security import train as T  # noqa: E402
from navigo_core.security.classifier import text_lang  # noqa: E402
from navigo_core.security.rules import INJECTION_PREFIX, _scan, injection_rules  # noqa: E402

#: own_benign.jsonl rows before round 3 (the rest were written in round 3).
ROUND2_BENIGN_ROWS = 1179
N_SHAPES = len(F._ZH_SHAPES)


def _half_b(text: str) -> bool:
    return hashlib.md5(text.encode("utf-8")).digest()[0] % 2 == 1


def _is_role_prompt(r: dict) -> bool:
    src = r.get("source", "")
    return r["label"] == 0 and "awesome-chatgpt-prompts" in src and "question/" not in src


class Data:
    def __init__(self):
        train = B._jsonl(ROOT / "training/injection/train.jsonl.gz")
        tr, va = B._split(train)
        self.tr = [{"text": r["text"], "label": r["label"], "lang": r["lang"], "group": "public",
                    "subtype": r.get("subtype", ""), "source": r.get("source", "")} for r in tr]
        self.va = [dict(r, group="public") for r in va]
        self.train_all = [dict(r, group="public", role=_is_role_prompt(r)) for r in train]
        self.base = B._base_rows(True)
        self.base_nodev = B._base_rows(False)
        self.cal = [r["text"] for r in T.calibration_rows(ROOT)]  # scored for the threshold only
        self.lab = [r["text"] for r in T.labelled_benign_rows(ROOT, False)]
        self.dev = [dict(r, label=B._label(r)) for name in ("malicious_dev.jsonl", "benign_dev.jsonl")
                    for r in B._jsonl(B.DEV / name)] if (B.DEV / "benign_dev.jsonl").exists() else []
        own = T.own_rows(ROOT)
        self.own_attacks = [r for r in own if r.get("origin") == "own_attacks.jsonl"]
        benign = [r for r in own if r.get("origin") == "own_benign.jsonl"]
        self.round3 = [r["text"] for r in benign[ROUND2_BENIGN_ROWS:]]
        self.round3_zh = [t for t in self.round3 if text_lang(t) == "zh"]
        self.own_b = [r for r in benign if _half_b(r["text"])]
        self.own_b_texts = {r["text"] for r in self.own_b}


class Model:
    """The recipe of train.fit (tf-idf blocks + concept block, one linear model) with experiment options:
    ``model`` logreg / linear_svm / cnb; ``per_lang`` (one model per language); ``hybrid`` (English scored
    by an English-only model); ``en_aug`` / ``zh_aug`` ({bias, dense}: a language-only copy of the concept
    block); ``shape_scale`` (multiplies the Chinese shape features)."""

    cache: dict = {}

    def __init__(self, config: dict):
        self.config = config

    @classmethod
    def feats(cls, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in cls.cache]
        if missing:
            prep = [F.prepare(t) for t in missing]
            counts, dense = T._features(prep, T.CONFIG, [F.crop_raw(t) for t in missing])
            for i, t in enumerate(missing):
                cls.cache[t] = ([c[i] for c in counts], dense[i], prep[i])
        return [cls.cache[t] for t in texts]

    def _dense(self, dense, prep):
        c = self.config
        if c.get("shape_scale") is not None:
            dense = dense.copy()
            dense[:, -N_SHAPES:] *= c["shape_scale"]
        cols = [dense]
        for lg in ("zh", "en"):
            a = c.get(f"{lg}_aug")
            if a:
                m = np.array([1.0 if text_lang(p) == lg else 0.0 for p in prep]).reshape(-1, 1)
                cols += [m * a.get("bias", 0.0), dense * m * a.get("dense", 0.0)]
        return np.hstack(cols) * c["dense_scale"]

    def _matrix(self, items, fit=False):
        nb = len(self.config["blocks"])
        counts = [sp.vstack([it[0][b] for it in items]).tocsr() for b in range(nb)]
        prep = [it[2] for it in items]
        dense = np.vstack([it[1] for it in items])
        if fit:
            self.tfs = [TfidfTransformer(sublinear_tf=True, use_idf=True, smooth_idf=True, norm="l2").fit(X)
                        for X in counts]
        X = sp.hstack([tf.transform(Xc) for tf, Xc in zip(self.tfs, counts)]
                      + [sp.csr_matrix(self._dense(dense, prep))]).tocsr()
        return X, prep

    def _new(self, C):
        kind = self.config.get("model", "logreg")
        if kind == "linear_svm":
            return LinearSVC(C=C, class_weight="balanced", max_iter=20000, random_state=0)
        if kind == "cnb":
            from sklearn.naive_bayes import ComplementNB
            return ComplementNB(alpha=C)
        return LogisticRegression(C=C, class_weight="balanced", solver="liblinear", max_iter=5000, random_state=0)

    def fit(self, rows):
        c = self.config
        X, prep = self._matrix(self.feats([r["text"] for r in rows]), fit=True)
        y = np.array([r["label"] for r in rows])
        w = T.sample_weights(rows, c)
        lang = np.array([text_lang(p) for p in prep])
        cl = c.get("C_lang", {})

        def one(mask, C):
            m = self._new(C)
            if c.get("model") == "cnb":
                m.fit(X[mask], y[mask])
            else:
                m.fit(X[mask], y[mask], sample_weight=w[mask])
            return m

        everything = np.ones(len(rows), dtype=bool)
        if c.get("per_lang"):
            self.models = {lg: one(lang == lg, cl.get(lg, c["C"])) for lg in ("en", "zh")}
        elif c.get("hybrid"):
            self.models = {"en": one(lang == "en", cl.get("en", c["C"])), "zh": one(everything, c["C"])}
        else:
            shared = one(everything, c["C"])
            self.models = {"en": shared, "zh": shared}
        return self

    def _logits(self, X, prep):
        out = np.zeros(X.shape[0])
        lang = np.array([text_lang(p) for p in prep])
        for lg, m in self.models.items():
            sel = lang == lg
            if sel.any():
                if self.config.get("model") == "cnb":
                    lp = m.predict_log_proba(X[sel])
                    out[sel] = lp[:, 1] - lp[:, 0]
                else:
                    out[sel] = m.decision_function(X[sel])
        return out

    def scores(self, texts):
        if not texts:
            return np.zeros(0)
        X, prep = self._matrix(self.feats(texts))
        logits = self._logits(X, prep)
        seg = self.config.get("segments")
        if seg:
            owner, parts = [], []
            for i, p in enumerate(prep):
                if text_lang(p) in seg.get("langs", ("en", "zh")):
                    for part in F.segments(p, seg["max_segments"], seg["min_chars"]):
                        owner.append(i)
                        parts.append(part)
            if parts:
                counts, dense = T._features(parts, T.CONFIG, None)
                items = [([c[j] for c in counts], dense[j], parts[j]) for j in range(len(parts))]
                Xs, _ = self._matrix(items)
                np.maximum.at(logits, np.array(owner), self._logits(Xs, parts))
        return 1.0 / (1.0 + np.exp(-logits))


def thresholds(model: Model, data: Data) -> dict[str, float]:
    """As train.calibrate: per language, ≤ 1 % false positives on the even half and none on the labelled sets."""
    s_cal, s_lab = model.scores(data.cal), model.scores(data.lab)
    out = {}
    for lang in ("en", "zh"):
        c = np.sort([s for s, t in zip(s_cal, data.cal) if text_lang(t) == lang])
        lab = [s for s, t in zip(s_lab, data.lab) if text_lang(t) == lang]
        floor = max(max(lab, default=0.0), float(c[len(c) - 1 - int(math.floor(0.01 * len(c)))]))
        out[lang] = round(min(math.floor(floor * 1000 + 1) / 1000, 0.999), 3)
    return out


_RULES: dict[str, bool] = {}


def _rules(texts):
    for t in texts:
        if t not in _RULES:
            _RULES[t] = bool(_scan(t, injection_rules(), INJECTION_PREFIX))
    return np.array([_RULES[t] for t in texts])


def _recall(model, thr, rows, role_free=False):
    texts = [r["text"] for r in rows]
    s = model.scores(texts)
    flag = np.array([x >= thr[text_lang(t)] for x, t in zip(s, texts)])
    both = flag | _rules(texts)
    out = {}
    for lg in ("en", "zh"):
        att = np.array([r["label"] == 1 and r["lang"] == lg for r in rows])
        ben = np.array([r["label"] == 0 and r["lang"] == lg for r in rows])
        ordinary = ben & np.array([not _is_role_prompt(r) for r in rows])
        out[lg] = (float(both[att].mean()) if att.any() else float("nan"), float(flag[ben].mean()) if ben.any() else float("nan"),
                   float(flag[ordinary].mean()) if ordinary.any() else float("nan"), float(flag[att].mean()) if att.any() else float("nan"))
    return out, s


def evaluate(name: str, overrides: dict, data: Data, dev: bool = False) -> dict:
    t0 = time.time()
    config = dict(T.CONFIG, **overrides)
    res: dict = {"name": name}
    for own_b_out in (False, True):
        rows = data.tr + data.base
        if own_b_out:
            rows = [r for r in rows if not (r["group"] == "own" and r["label"] == 0 and r["text"] in data.own_b_texts)]
        model = Model(config).fit(rows)
        thr = thresholds(model, data)
        rec, _ = _recall(model, thr, data.va)
        tag = "out" if own_b_out else "in"
        res[f"thr_{tag}"] = thr
        for lg in ("en", "zh"):
            res[f"val_{lg}_{tag}"] = round(rec[lg][0], 3)
            res[f"valFPord_{lg}_{tag}"] = round(rec[lg][2], 3)
            if own_b_out:
                ob = [r["text"] for r in data.own_b if r["lang"] == lg]
                res[f"ownB_FP_{lg}"] = round(float(np.mean(model.scores(ob) >= thr[lg])), 3)
    if dev and data.dev:
        model = Model(config).fit(data.train_all + data.base_nodev)
        rec, _ = _recall(model, thresholds(model, data), data.dev)
        for lg in ("en", "zh"):
            res[f"dev_{lg}_clf"], res[f"devFP_{lg}"] = round(rec[lg][3], 3), round(rec[lg][1], 3)
    res["secs"] = round(time.time() - t0)
    print(json.dumps(res, ensure_ascii=False))
    sys.stdout.flush()
    return res


def read_rows(data: Data) -> set[str]:
    """Every Chinese attack of the validation split: the shape features were designed after reading the
    validation misses, so the CV check scores none of those rows."""
    return {r["text"] for r in data.va if r["label"] == 1 and r["lang"] == "zh"}


def cv(name: str, overrides: dict, data: Data, seen: set[str], seed: int) -> None:
    config = dict(T.CONFIG, **overrides)
    rows = data.train_all
    strat = [f"{r['label']}{r['lang']}{r['subtype']}" for r in rows]
    hit = {"en": [0, 0], "zh": [0, 0]}
    for tr_i, te_i in StratifiedKFold(5, shuffle=True, random_state=seed).split(np.zeros(len(rows)), strat):
        model = Model(config).fit([rows[i] for i in tr_i] + data.base)
        thr = thresholds(model, data)
        te = [rows[i] for i in te_i if rows[i]["label"] == 1 and rows[i]["text"] not in seen]
        rec_s = model.scores([r["text"] for r in te])
        rl = _rules([r["text"] for r in te])
        for r, s, f in zip(te, rec_s, rl):
            hit[r["lang"]][0] += bool(f or s >= thr[text_lang(r["text"])])
            hit[r["lang"]][1] += 1
    print("CV", name, f"seed {seed}", {k: round(v[0] / v[1], 4) for k, v in hit.items()}, f"(zh rows {hit['zh'][1]})")


def own_loso(name: str, overrides: dict, data: Data, round2_own_b: bool = False) -> None:
    config = dict(T.CONFIG, **overrides)
    base = [r for r in data.base if not (r["group"] == "own" and r["label"] == 0 and r["text"] in data.own_b_texts)]
    own_b = [r for r in data.own_b if not (round2_own_b and r["text"] in set(data.round3))]
    va_ben = [r for r in data.va if r["label"] == 0 and not _is_role_prompt(r)]
    res = {}
    for lang, st in sorted({(r["lang"], r["subtype"]) for r in data.own_attacks}):
        held = [r["text"] for r in data.own_attacks if r["lang"] == lang and r["subtype"] == st]
        if len(held) < 10:
            continue
        hs = set(held)
        model = Model(config).fit(data.tr + [r for r in base if not (r["label"] == 1 and r["text"] in hs)])
        s_ben = np.sort(model.scores([r["text"] for r in va_ben + own_b if r["lang"] == lang]))
        th = s_ben[min(int(np.floor(0.99 * len(s_ben))), len(s_ben) - 1)] + 1e-9
        res[f"{lang}/{st}"] = round(float(np.mean(model.scores(held) >= th)), 3)
    means = {lg: round(float(np.mean([v for k, v in res.items() if k.startswith(lg)])), 3) for lg in ("en", "zh")}
    print("OWN-LOSO", name, "(round-2 own-B)" if round2_own_b else "(own-B incl. round-3 rows)", means, res)


def folds(name: str, overrides: dict, data: Data) -> None:
    config = dict(T.CONFIG, **overrides)
    fold = {t: hashlib.md5(t.encode()).digest()[1] % 2 for t in data.round3_zh}
    out = []
    for f in (0, 1):
        held = {t for t in data.round3_zh if fold[t] == f}
        model = Model(config).fit([r for r in data.tr + data.base if r["text"] not in held])
        thr = thresholds(model, data)
        rec, _ = _recall(model, thr, data.va)
        out.append(f"fold {f}: val zh {rec['zh'][0]:.3f}, thr {thr['zh']}, held-out benign FP "
                   f"{np.mean(model.scores(sorted(held)) >= thr['zh']):.3f} (n={len(held)})")
    print("FOLDS", name, " | ".join(out))


_V = F.ZH_SHAPE_VALUE
_LR = {"model": "logreg", "C": 10.0}
#: The main rows of EXPERIMENTS.md round 3 (on the final data; the table also has rows run before the
#: round-3 benign rows existed, with the patterns then as extra columns).
CONFIGS: dict[str, dict] = {
    "round-2 recipe (LR C=10, no shapes)": dict(_LR, shape_scale=0.0),
    "LR, per-language models": dict(_LR, shape_scale=0.0, per_lang=True),
    "LR, zh bias + concept copy": dict(_LR, shape_scale=0.0, zh_aug={"bias": 1.0, "dense": 1.0}),
    "LR + shapes x0.5": dict(_LR, shape_scale=0.5 / _V),
    "LR + shapes x0.75": dict(_LR, shape_scale=0.75 / _V),
    "LR + shapes x1": dict(_LR, shape_scale=1.0 / _V),
    "LR + shapes x0.75, hybrid en": dict(_LR, shape_scale=0.75 / _V, hybrid=True),
    "LR + shapes x0.75, en bias + concepts x0.3": dict(_LR, shape_scale=0.75 / _V, en_aug={"bias": 1.0, "dense": 0.3}),
    "complement NB a=1": {"model": "cnb", "C": 1.0},
    "SVM C=0.3": {"C": 0.3},
    "SVM C=3": {"C": 3.0},
    "SVM, no shapes": {"shape_scale": 0.0},
    "SVM + shapes x1": {"shape_scale": 1.0 / _V},
    "shipped (SVM C=1, shapes x0.5)": {},
}


def main(argv: list[str]) -> int:
    flags = {a for a in argv if a.startswith("--")}
    names = [a for a in argv if not a.startswith("--")] or list(CONFIGS)
    with threadpool_limits(1):
        data = Data()
        seen = read_rows(data) if "--cv" in flags else set()
        for n in names:
            evaluate(n, CONFIGS[n], data, dev="--dev" in flags)
            if "--cv" in flags:
                for seed in (1, 2) if "--cv2" in flags else (1,):
                    cv(n, CONFIGS[n], data, seen, seed)
            if "--loso" in flags:
                own_loso(n, CONFIGS[n], data, round2_own_b=True)
                own_loso(n, CONFIGS[n], data)
            if "--folds" in flags:
                folds(n, CONFIGS[n], data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
